# ember: ember-asc is the host compiler behind a driver; it is tested by the builds that use it.
set(CMAKE_ASC_COMPILER_WORKS 1 CACHE INTERNAL "")
