# ember: CANN's ascendc.cmake for kernels that run on ember's emulated NPU. Installed where CANN's
# samples look for it (<toolkit>/compiler/tikcpp/ascendc_kernel_cmake/, and the older
# <toolkit>/tools/tikcpp/ascendc_kernel_cmake/ includes this one).
#
#   ascendc_library(<target> STATIC|SHARED <sources>...)
#       builds the kernels with the host compiler: each source's <<<...>>> launches are rewritten
#       to ember's launch call, and each __global__ kernel gets CANN's aclrtlaunch_<kernel>()
#       with its header aclrtlaunch_<kernel>.h in ${CMAKE_BINARY_DIR}/include/<target>/ (on the
#       target's include path, for the host code that links it).
#   ascendc_include_directories(<target> [PRIVATE|PUBLIC|INTERFACE] <dirs>...)
#   ascendc_compile_definitions(<target> [PRIVATE|PUBLIC|INTERFACE] <definitions>...)
#   ascendc_compile_options(<target> [PRIVATE|PUBLIC|INTERFACE] <options>...)
# and the targets CANN's samples link: host_intf_pub (acl headers and libascendcl).
# (ember's own build includes this file from its source tree with EMBER_ASCENDC_IN_TREE on and
# EMBER_ASCENDC_KERNEL_INCLUDES and EMBER_ASCENDC_RUNTIME set: its include directories and the ember
# target; nothing is installed then.)
cmake_minimum_required(VERSION 3.16)
set(EMBER_ASCENDC_GEN "${CMAKE_CURRENT_LIST_DIR}/ember_ascendc_gen.pl")
find_program(EMBER_PERL perl REQUIRED)
if(NOT DEFINED EMBER_ASCENDC_KERNEL_INCLUDES)
  get_filename_component(EMBER_CANN_ROOT "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
  set(EMBER_ASCENDC_KERNEL_INCLUDES "${EMBER_CANN_ROOT}/compiler/tikcpp/tikcfw" "${EMBER_CANN_ROOT}/include")
  set(EMBER_ASCENDC_RUNTIME "${EMBER_CANN_ROOT}/lib64/libascendcl.so")
  link_directories(${EMBER_CANN_ROOT}/lib64)
  if(NOT TARGET host_intf_pub)
    add_library(host_intf_pub INTERFACE)
    target_include_directories(host_intf_pub INTERFACE ${EMBER_CANN_ROOT}/include)
    target_link_libraries(host_intf_pub INTERFACE ${EMBER_ASCENDC_RUNTIME})
  endif()
endif()

function(ascendc_library target kind)
  if(NOT kind STREQUAL "STATIC" AND NOT kind STREQUAL "SHARED")
    message(FATAL_ERROR "ascendc_library(${target} ${kind} ...): the kind is STATIC or SHARED")
  endif()
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/ember_ascendc/${target})
  set(hdr_dir ${CMAKE_BINARY_DIR}/include/${target})
  file(MAKE_DIRECTORY ${gen_dir} ${hdr_dir})
  set(gen_srcs)
  set(src_dirs)  # a kernel's own #include "..." files sit beside it, not beside its prepared copy
  foreach(src ${ARGN})
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(name ${src} NAME_WE)
    get_filename_component(dir ${abs} DIRECTORY)
    list(APPEND src_dirs ${dir})
    set(out ${gen_dir}/${name}.cpp)
    # At configure time, so the launch headers exist before any host code is compiled; again at
    # build time whenever the source changes.
    execute_process(COMMAND ${EMBER_PERL} ${EMBER_ASCENDC_GEN} ${abs} ${out} ${hdr_dir} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "ascendc_library(${target}): preparing ${src} failed")
    endif()
    add_custom_command(OUTPUT ${out} COMMAND ${EMBER_PERL} ${EMBER_ASCENDC_GEN} ${abs} ${out} ${hdr_dir}
                       DEPENDS ${abs} ${EMBER_ASCENDC_GEN} COMMENT "ascendc: preparing ${src}")
    list(APPEND gen_srcs ${out})
  endforeach()
  add_library(${target} ${kind} ${gen_srcs})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON LINKER_LANGUAGE CXX)
  target_compile_features(${target} PRIVATE cxx_std_17)
  list(REMOVE_DUPLICATES src_dirs)
  target_include_directories(${target} PRIVATE ${src_dirs} ${EMBER_ASCENDC_KERNEL_INCLUDES} ${CMAKE_CURRENT_SOURCE_DIR}
                             PUBLIC ${hdr_dir})
  target_link_libraries(${target} PUBLIC ${EMBER_ASCENDC_RUNTIME})
  # Installed as CANN's are: the library in lib/, the launch headers in include/<target>/ (not
  # from ember's own build, whose examples use this file).
  if(NOT EMBER_ASCENDC_IN_TREE)
    install(TARGETS ${target} LIBRARY DESTINATION lib ARCHIVE DESTINATION lib)
    install(DIRECTORY ${hdr_dir} DESTINATION include)
  endif()
endfunction()

function(ascendc_include_directories target)
  target_include_directories(${target} ${ARGN})
endfunction()
function(ascendc_compile_definitions target)
  target_compile_definitions(${target} ${ARGN})
endfunction()
function(ascendc_compile_options target)
  target_compile_options(${target} ${ARGN})
endfunction()
