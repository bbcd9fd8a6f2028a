# ember: find_package(ASC) of CANN's asc-devkit: the ASC language (Ascend C sources, *.asc, with
# host code and <<<...>>> launches in one file), compiled by ember-asc with the host compiler for
# ember's emulated NPU. Use: find_package(ASC) before project(... LANGUAGES ASC CXX).
#   CMAKE_ASC_RUN_MODE   npu (default) or cpu (defines ASCENDC_CPU_DEBUG); both run on ember
#   CMAKE_ASC_ARCHITECTURES, --npu-arch=...: accepted; ember emulates one vector core kind
get_filename_component(_ember_root "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(EMBER_ASC_ROOT "${_ember_root}" CACHE INTERNAL "ember's toolkit root, for the ASC language")
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}/modules")
set(ASC_FOUND TRUE)
