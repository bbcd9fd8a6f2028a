# ember: the ASC language's compiler is ember-asc, a driver of the host C++ compiler.
if(NOT CMAKE_ASC_COMPILER)
  set(CMAKE_ASC_COMPILER "${EMBER_ASC_ROOT}/bin/ember-asc")
endif()
set(CMAKE_ASC_COMPILER_ID "ember")
set(CMAKE_ASC_COMPILER_ENV_VAR "ASCC")
configure_file(${CMAKE_CURRENT_LIST_DIR}/CMakeASCCompiler.cmake.in
               ${CMAKE_PLATFORM_INFO_DIR}/CMakeASCCompiler.cmake @ONLY)
