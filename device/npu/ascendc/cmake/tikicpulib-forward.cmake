# ember: find_package(tikicpulib) from <toolkit>/lib64/cmake (CMAKE_PREFIX_PATH at the toolkit).
include(${CMAKE_CURRENT_LIST_DIR}/../../../tools/tikicpulib/lib/cmake/tikicpulib-config.cmake)
