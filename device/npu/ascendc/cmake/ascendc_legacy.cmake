# ember: the older place of CANN's ascendc.cmake (<toolkit>/tools/tikcpp/ascendc_kernel_cmake/).
include(${CMAKE_CURRENT_LIST_DIR}/../../../compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake)
