# ember: CANN's CPU debug library (find_package(tikicpulib)), for kernels built with the host
# compiler and run with ICPU_RUN_KF on ember's emulated NPU (all cores, every check).
# Defines tikicpulib::<SOC_VERSION> (and tikicpulib::tikicpulib): the kernel headers,
# __CCE_KT_TEST__ (CANN's CPU-debug switch), and libember under CANN's library names.
get_filename_component(_ember_root "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
while(NOT EXISTS "${_ember_root}/set_env.sh" AND NOT _ember_root STREQUAL "/")
  get_filename_component(_ember_root "${_ember_root}" DIRECTORY)
endwhile()
link_directories(${_ember_root}/lib64)
if(NOT TARGET tikicpulib::tikicpulib)
  add_library(tikicpulib::tikicpulib INTERFACE IMPORTED)
  set_target_properties(tikicpulib::tikicpulib PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_ember_root}/compiler/tikcpp/tikcfw;${_ember_root}/include"
    INTERFACE_COMPILE_DEFINITIONS "__CCE_KT_TEST__;ASCENDC_CPU_DEBUG"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES "${_ember_root}/lib64/libascendcl.so")
endif()
foreach(_soc ${SOC_VERSION} Ascend910B1 Ascend910B2 Ascend910B3 Ascend910B4 Ascend910 Ascend310P1 Ascend310P3 Ascend310B1)
  if(NOT TARGET tikicpulib::${_soc})
    add_library(tikicpulib::${_soc} INTERFACE IMPORTED)
    set_target_properties(tikicpulib::${_soc} PROPERTIES INTERFACE_LINK_LIBRARIES tikicpulib::tikicpulib)
  endif()
endforeach()
set(tikicpulib_FOUND TRUE)
