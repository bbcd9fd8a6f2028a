# The declarations of CPU kernels that declare themselves, generated at configure time from their
# definitions, so such a kernel is one file (device/cpu/<kernel>.cpp) that both the CPU op and the
# NPU emulator call:
#
#   // CPU kernel: out[..., i, ...] = the sum of in[..., j, ...] over j <= i along dim ...
#   void cumsum(const Strided& out, const Strided& in, int64_t dim, bool exclusive /*= false*/,
#               bool reverse /*= false*/) {
#
# The comment lines from "// CPU kernel:" down to the definition become its documentation, the
# definition (in namespace ember::cpu, up to its "{") its declaration, and a default written as a
# comment, /*= value*/, a default argument. ember/gen/cpu_kernels.h (in ${EMBER_GEN_INCLUDE},
# not installed: the device layer is internal) holds them all; a source whose marker is not
# followed by a definition stops configure with a message.
file(GLOB _cpu_kernel_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/device/cpu/*.cpp)
set(_cpu_kernel_decls "")
string(ASCII 1 _semi)
foreach(src ${_cpu_kernel_sources})
  file(READ ${src} _text)
  if(NOT _text MATCHES "// CPU kernel:")
    continue()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})  # a changed signature regenerates
  get_filename_component(_src_name ${src} NAME)
  string(REPLACE ";" "${_semi}" _text "${_text}")
  string(REGEX MATCHALL "// CPU kernel:[^\n]*\n(//[^\n]*\n)*[^\n/{][^{]*\\{" _defs "${_text}")
  string(REGEX MATCHALL "// CPU kernel:" _markers "${_text}")
  list(LENGTH _defs _nd)
  list(LENGTH _markers _nm)
  if(NOT _nd EQUAL _nm)
    message(FATAL_ERROR "ember: device/cpu/${_src_name}: each \"// CPU kernel:\" comment must be followed by "
                        "more comment lines or the kernel's definition (cmake/cpu_kernels.cmake)")
  endif()
  foreach(def ${_defs})
    string(REGEX MATCH "^((//[^\n]*\n)+)([^{]*)\\{$" _m "${def}")
    string(REPLACE "// CPU kernel: " "// " doc "${CMAKE_MATCH_1}")
    string(REGEX REPLACE "[ \n]+" " " sig "${CMAKE_MATCH_3}")
    string(STRIP "${sig}" sig)
    if(NOT sig MATCHES "^[A-Za-z_][A-Za-z0-9_:<>]* [a-z_0-9]+\\(.*\\)$")
      message(FATAL_ERROR "ember: device/cpu/${_src_name}: cannot read the kernel's definition '${sig}'")
    endif()
    string(REGEX REPLACE "/\\*= *([^*]*[^* ]) *\\*/" "= \\1" sig "${sig}")
    string(REPLACE "${_semi}" ";" doc "${doc}")
    string(APPEND _cpu_kernel_decls "\n${doc}// (device/cpu/${_src_name})\n${sig};\n")
  endforeach()
endforeach()
file(CONFIGURE OUTPUT ${EMBER_GEN_INCLUDE}/ember/gen/cpu_kernels.h @ONLY NEWLINE_STYLE UNIX CONTENT
"// ember: the CPU kernels that declare themselves (\"// CPU kernel:\" above their definition in
// device/cpu/*.cpp). Generated at configure time by cmake/cpu_kernels.cmake.
#pragma once

#include \"ember/device/cpu/strided.h\"

namespace ember {
namespace cpu {
${_cpu_kernel_decls}
}  // namespace cpu
}  // namespace ember
")
