# The public C++ API of ops marked EMBER_EXPORT_OP(id, function[, method]) in ops/*.cpp, generated
# at configure time from the op's declaration (EMBER_DECLARE_OP: its schema gives the parameter
# names and defaults, its C++ signature the types), as PyTorch generates Functions.h and
# TensorBody.h from native_functions.yaml:
#   ember/gen/functions.h       ember::<op>(...), with the schema's defaults and the comment lines
#                               right above EMBER_EXPORT_OP (included by ops/ops.h)
#   ember/gen/tensor_methods.inc Tensor::<op>(...) const (included inside class Tensor)
#   ember/gen/torch_names.inc   using ember::<op>; (included in namespace torch by torch.h)
#   public_ops.cpp              their definitions (compiled into the ops layer): the function calls
#                               the op through the dispatcher, the method calls the function
# The headers live in ${EMBER_GEN_INCLUDE}/ember/gen (an include root of its own, linked into each
# layer's tree) and are installed in include/ember/gen. EMBER_GEN_HEADERS lists them (relative to
# include/), EMBER_GEN_SOURCES the .cpp.
set(EMBER_GEN_INCLUDE ${CMAKE_CURRENT_BINARY_DIR}/gen_include)
set(_gen_dir ${EMBER_GEN_INCLUDE}/ember/gen)
file(MAKE_DIRECTORY ${_gen_dir})

# Splits text at the commas outside (), [], <> and {}.
function(_ember_split_top out text)
  set(parts)
  set(cur "")
  set(depth 0)
  string(LENGTH "${text}" n)
  set(i 0)
  while(i LESS n)
    string(SUBSTRING "${text}" ${i} 1 c)
    if(c MATCHES "[[(<{]")
      math(EXPR depth "${depth} + 1")
    elseif(c MATCHES "[])>}]")
      math(EXPR depth "${depth} - 1")
    endif()
    if(c STREQUAL "," AND depth EQUAL 0)
      string(STRIP "${cur}" cur)
      list(APPEND parts "${cur}")
      set(cur "")
    else()
      string(APPEND cur "${c}")
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  string(STRIP "${cur}" cur)
  if(NOT cur STREQUAL "")
    list(APPEND parts "${cur}")
  endif()
  set(${out} "${parts}" PARENT_SCOPE)
endfunction()

# A schema default as C++: None, True/False, [a, b], numbers.
function(_ember_cpp_default out value where)
  if(value STREQUAL "None")
    set(v "std::nullopt")
  elseif(value STREQUAL "True")
    set(v "true")
  elseif(value STREQUAL "False")
    set(v "false")
  elseif(value MATCHES "^\\[(.*)\\]$")
    set(v "{${CMAKE_MATCH_1}}")
  elseif(value MATCHES "^-?[0-9][0-9.e+-]*$")
    set(v "${value}")
  else()
    message(FATAL_ERROR "ember: ${where}: the default '${value}' has no C++ form here (None, True, False, "
                        "[..], numbers); write the public function by hand")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

string(ASCII 1 _semi)
set(_fn_decls "")
set(_method_decls "")
set(_torch_names "")
set(_defs "")
file(GLOB _op_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/ops/*.cpp)
foreach(src ${_op_sources})
  file(READ ${src} _text)
  get_filename_component(_src_name ${src} NAME)
  string(REPLACE ";" "${_semi}" _text "${_text}")  # (a ';' would split the list of matches)
  string(REGEX MATCHALL "(//[^\n]*\n)*EMBER_EXPORT_OP\\([a-z_0-9]+(, (function|method))+\\)" _exports "${_text}")
  foreach(e ${_exports})
    # The comment lines right above the export document the function in functions.h.
    string(REGEX MATCH "^((//[^\n]*\n)*)EMBER_EXPORT_OP\\(([a-z_0-9]+)" _m "${e}")
    string(REPLACE "${_semi}" ";" doc "${CMAKE_MATCH_1}")
    set(id ${CMAKE_MATCH_3})
    set(where "ops/${_src_name}, EMBER_EXPORT_OP(${id})")
    if(NOT _text MATCHES "EMBER_DECLARE_OP\\(${id}, [A-Za-z0-9]+,(([ \n]*\"[^\"]*\")+),[ \n]*([^${_semi}]*)\\)${_semi}")
      message(FATAL_ERROR "ember: ${where}: no EMBER_DECLARE_OP(${id}, ...) in the same file")
    endif()
    set(sig "${CMAKE_MATCH_3}")
    string(REGEX REPLACE "\"[ \n]*\"" "" schema "${CMAKE_MATCH_1}")
    string(STRIP "${schema}" schema)
    string(REGEX REPLACE "^\"(.*)\"$" "\\1" schema "${schema}")
    if(NOT schema MATCHES "^ember::${id}\\((.*)\\) -> (.+)$")
      message(FATAL_ERROR "ember: ${where}: only ops without an overload name are exported (schema '${schema}')")
    endif()
    _ember_split_top(args "${CMAKE_MATCH_1}")
    string(REGEX REPLACE "[ \n]+" " " sig "${sig}")
    if(NOT sig MATCHES "^([^(]+)\\((.*)\\)$")
      message(FATAL_ERROR "ember: ${where}: cannot read the C++ signature '${sig}'")
    endif()
    string(STRIP "${CMAKE_MATCH_1}" ret)
    _ember_split_top(types "${CMAKE_MATCH_2}")
    list(LENGTH args nargs)
    list(LENGTH types ntypes)
    if(NOT nargs EQUAL ntypes)
      message(FATAL_ERROR "ember: ${where}: ${nargs} schema arguments, ${ntypes} C++ parameters")
    endif()
    set(params "")          # with defaults
    set(params_plain "")    # without
    set(names "")
    set(method_params "")
    set(method_params_plain "")
    set(method_names "*this")
    set(i 0)
    foreach(a ${args})
      list(GET types ${i} t)
      if(NOT a MATCHES "^[^ ]+ ([a-z_0-9]+)(=(.+))?$")
        message(FATAL_ERROR "ember: ${where}: cannot read the argument '${a}'")
      endif()
      set(name ${CMAKE_MATCH_1})
      set(p "${t} ${name}")
      set(pd "${p}")
      if(NOT "${CMAKE_MATCH_2}" STREQUAL "")  # (a default of 0 is false to if(CMAKE_MATCH_3))
        _ember_cpp_default(d "${CMAKE_MATCH_3}" "${where}")
        set(pd "${p} = ${d}")
      endif()
      list(APPEND params "${pd}")
      list(APPEND params_plain "${p}")
      list(APPEND names "${name}")
      if(i GREATER 0)
        list(APPEND method_params "${pd}")
        list(APPEND method_params_plain "${p}")
        list(APPEND method_names "${name}")
      endif()
      math(EXPR i "${i} + 1")
    endforeach()
    list(JOIN params ", " params)
    list(JOIN params_plain ", " params_plain)
    list(JOIN names ", " names)
    list(JOIN method_params ", " method_params)
    list(JOIN method_params_plain ", " method_params_plain)
    list(JOIN method_names ", " method_names)
    string(APPEND _fn_decls "${doc}${ret} ${id}(${params});\n")
    string(APPEND _torch_names "using ember::${id};\n")
    string(APPEND _defs "${ret} ${id}(${params_plain}) {
  static const auto h = Dispatcher::singleton().find_schema(\"ember::${id}\").typed<${sig}>();
  return h.call(${names});
}
")
    if(e MATCHES ", method")
      list(GET args 0 a0)
      list(GET types 0 t0)
      if(NOT a0 STREQUAL "Tensor self" OR NOT t0 STREQUAL "const Tensor&")
        message(FATAL_ERROR "ember: ${where}: a method needs 'Tensor self' (const Tensor&) first")
      endif()
      string(APPEND _method_decls "  ${ret} ${id}(${method_params}) const;\n")
      string(APPEND _defs "${ret} Tensor::${id}(${method_params_plain}) const { return ember::${id}(${method_names}); }
")
    endif()
  endforeach()
endforeach()

set(_note "Generated at configure time by cmake/public_ops.cmake from the ops marked EMBER_EXPORT_OP in ops/*.cpp")
file(CONFIGURE OUTPUT ${_gen_dir}/functions.h @ONLY NEWLINE_STYLE UNIX CONTENT
"// ember: the public functions of exported ops. ${_note}.
#pragma once

#include <optional>

#include \"ember/tensor/tensor.h\"

namespace ember {
${_fn_decls}}  // namespace ember
")
file(CONFIGURE OUTPUT ${_gen_dir}/tensor_methods.inc @ONLY NEWLINE_STYLE UNIX CONTENT
"  // Tensor methods of exported ops. ${_note}.
${_method_decls}")
file(CONFIGURE OUTPUT ${_gen_dir}/torch_names.inc @ONLY NEWLINE_STYLE UNIX CONTENT
"// torch:: names of exported ops. ${_note}.
${_torch_names}")
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/public_ops.cpp @ONLY NEWLINE_STYLE UNIX CONTENT
"// ember: definitions of the public functions and Tensor methods of exported ops. ${_note}.
#include \"ember/dispatch/dispatcher.h\"
#include \"ember/ops/ops.h\"

namespace ember {
${_defs}}  // namespace ember
")
set(EMBER_GEN_HEADERS ember/gen/functions.h ember/gen/tensor_methods.inc ember/gen/torch_names.inc)
set(EMBER_GEN_SOURCES ${CMAKE_CURRENT_BINARY_DIR}/public_ops.cpp)
