# CANN's C headers (acl/acl.h, aclnn/acl_meta.h, aclnnop/aclnn_<op>.h, hccl/hccl.h), under the
# paths CANN uses: the emulated NPU's API. The build and the install see one tree,
# ${EMBER_CANN_INCLUDE}, made at configure time from:
#  - device/npu/cann/: the hand-written headers (linked into the tree);
#  - the op tables' rows (core/tables/{unary,binary,reduce}_ops.def): each row's aclnnop header is
#    generated here, so adding a row adds its CANN header (cmake/aclnn_table_rows.cpp lists them);
#  - the hand-written emulator ops (device/npu/aclnn_*.cpp) marked "// CANN header <path>: ...":
#    their header is generated from their phase-1 definitions (step 2b);
#  - aclnnop/ember_aclnn_all.h, generated: an #include of every aclnnop header and
#    EMBER_ACLNN_OP_NAMES, every aclnn op they (and ember's own aclnn_ember.h) declare, from which
#    ember::npu's using-declarations and tests/check_cann_toolkit.sh's checks are expanded.
# EMBER_CANN_GENERATED lists the generated headers (relative paths), for the install and for
# tests/check_install_manifest.sh (written to ${EMBER_CANN_INCLUDE}/generated.txt).
set(EMBER_CANN_SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/device/npu/cann)
set(EMBER_CANN_INCLUDE ${CMAKE_CURRENT_BINARY_DIR}/cann_include)
set(EMBER_CANN_GENERATED)

# 1. Links to the hand-written headers; links left from a header since removed go.
file(GLOB_RECURSE _cann_headers CONFIGURE_DEPENDS RELATIVE ${EMBER_CANN_SOURCE} ${EMBER_CANN_SOURCE}/*.h)
file(GLOB_RECURSE _cann_staged LIST_DIRECTORIES false RELATIVE ${EMBER_CANN_INCLUDE} ${EMBER_CANN_INCLUDE}/*)
foreach(h ${_cann_staged})
  if(IS_SYMLINK ${EMBER_CANN_INCLUDE}/${h} AND NOT h IN_LIST _cann_headers)
    file(REMOVE ${EMBER_CANN_INCLUDE}/${h})
  endif()
endforeach()
foreach(h ${_cann_headers})
  get_filename_component(_dir ${EMBER_CANN_INCLUDE}/${h} DIRECTORY)
  file(MAKE_DIRECTORY ${_dir})
  if(NOT IS_SYMLINK ${EMBER_CANN_INCLUDE}/${h})
    file(REMOVE ${EMBER_CANN_INCLUDE}/${h})
    file(CREATE_LINK ${EMBER_CANN_SOURCE}/${h} ${EMBER_CANN_INCLUDE}/${h} SYMBOLIC)
  endif()
endforeach()

# 2. The table rows, through the preprocessor: "EMBER_ROW <form> <CANN name> <ember name>".
set(_tables ${CMAKE_CURRENT_SOURCE_DIR}/core/tables/unary_ops.def ${CMAKE_CURRENT_SOURCE_DIR}/core/tables/binary_ops.def
    ${CMAKE_CURRENT_SOURCE_DIR}/core/tables/reduce_ops.def ${CMAKE_CURRENT_SOURCE_DIR}/cmake/aclnn_table_rows.cpp)
list(TRANSFORM _cann_headers PREPEND ${EMBER_CANN_SOURCE}/ OUTPUT_VARIABLE _cann_paths)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_tables} ${_cann_paths}
             ${CMAKE_CURRENT_SOURCE_DIR}/device/npu/aclnn_ember.h)
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -E -P -I${EMBER_BUILD_INCLUDE}
                        ${CMAKE_CURRENT_SOURCE_DIR}/cmake/aclnn_table_rows.cpp
                OUTPUT_VARIABLE _rows RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "ember: preprocessing the op tables for their CANN headers failed:\n${_err}")
endif()
string(REGEX MATCHALL "EMBER_ROW [a-z_]+ [A-Za-z0-9]+ [a-z0-9_]+" _rows "${_rows}")

# The two phases of an op, declared as CANN's headers declare them.
function(_ember_aclnn_decl out name params)
  set(${out} "ACLNN_API aclnnStatus ${name}GetWorkspaceSize(${params}uint64_t* workspaceSize,
                                     aclOpExecutor** executor);
ACLNN_API aclnnStatus ${name}(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream);
" PARENT_SCOPE)
endfunction()

foreach(row ${_rows})
  string(REPLACE " " ";" row "${row}")
  list(GET row 1 form)
  list(GET row 2 acl)
  list(GET row 3 name)
  string(REGEX REPLACE "([a-z0-9])([A-Z])" "\\1_\\2" snake "${acl}")
  string(TOLOWER "${snake}" snake)
  string(TOUPPER "${snake}" guard)
  if(form MATCHES "^unary")
    set(table unary)
    set(what "out = ${name}(self), element by element")
    _ember_aclnn_decl(decls aclnn${acl} "const aclTensor* self, aclTensor* out, ")
    if(form STREQUAL "unary_inplace")
      _ember_aclnn_decl(inplace aclnnInplace${acl} "aclTensor* selfRef, ")
      string(APPEND decls "\n${inplace}")
      string(APPEND what "; in place: selfRef = ${name}(selfRef)")
    endif()
  elseif(form MATCHES "^binary")
    set(table binary)
    set(what "out = ${name}(self, other), broadcast and type-promoted")
    _ember_aclnn_decl(decls aclnn${acl} "const aclTensor* self, const aclTensor* other, aclTensor* out, ")
    if(form STREQUAL "binary_inplace")
      _ember_aclnn_decl(inplace aclnnInplace${acl} "aclTensor* selfRef, const aclTensor* other, ")
      string(APPEND decls "\n${inplace}")
      string(APPEND what "; in place: selfRef = ${name}(selfRef, other)")
    endif()
  elseif(form STREQUAL "reduce_dtype")
    set(table reduce)
    set(what "out = ${name} of self over dim (keepDim keeps them as size 1), accumulated and written in dtype")
    _ember_aclnn_decl(decls aclnn${acl}
                      "const aclTensor* self, const aclIntArray* dim, bool keepDim, aclDataType dtype, aclTensor* out, ")
  else()
    set(table reduce)
    set(what "out = ${name} of self over dim (keepDim keeps them as size 1), in self's dtype")
    _ember_aclnn_decl(decls aclnn${acl} "const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out, ")
  endif()
  set(rel aclnnop/aclnn_${snake}.h)
  if(rel IN_LIST _cann_headers)
    message(FATAL_ERROR "ember: device/npu/cann/${rel} is written by hand, but the row of ${name} in "
                        "core/tables/${table}_ops.def generates it; remove one of them")
  endif()
  file(CONFIGURE OUTPUT ${EMBER_CANN_INCLUDE}/${rel} @ONLY NEWLINE_STYLE UNIX CONTENT
"/* ember's emulated NPU: aclnnop/aclnn_${snake}.h, as in CANN's operator library.
 *
 * ${what}.
 * Generated from the row of ${name} in ember's op table core/tables/${table}_ops.def
 * (cmake/cann_headers.cmake). Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_${guard}_H_
#define EMBER_CANN_ACLNNOP_ACLNN_${guard}_H_

#include \"aclnn/aclnn_base.h\"

#ifdef __cplusplus
extern \"C\" {
#endif

${decls}
#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_${guard}_H_ */
")
  list(APPEND EMBER_CANN_GENERATED ${rel})
endforeach()

# 2b. The hand-written emulator ops that declare their own header: in device/npu/aclnn_*.cpp, a
# comment "// CANN header aclnnop/aclnn_<op>.h: <what it computes>" right above the definition of
# the op's phase 1 ("extern "C" aclnnStatus aclnn<Op>GetWorkspaceSize(<params>, uint64_t*
# workspaceSize, aclOpExecutor** executor)"). Ops naming the same header share it.
file(GLOB _emulator_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/device/npu/aclnn_*.cpp)
set(_own_headers)
string(ASCII 1 _semi)
foreach(src ${_emulator_sources})
  file(READ ${src} _text)
  string(REPLACE ";" "${_semi}" _text "${_text}")  # (a ';' would split the list of matches)
  string(REGEX MATCHALL "// CANN header aclnnop/[a-z0-9_]+\\.h: [^\n]*\nextern \"C\" aclnnStatus aclnn[A-Za-z0-9]+GetWorkspaceSize\\([^)]*\\)"
         _defs "${_text}")
  get_filename_component(_src_name ${src} NAME)
  foreach(def ${_defs})
    string(REGEX MATCH "^// CANN header (aclnnop/[a-z0-9_]+\\.h): ([^\n]*)\nextern \"C\" aclnnStatus (aclnn[A-Za-z0-9]+)GetWorkspaceSize\\(([^)]*)\\)$"
           _m "${def}")
    set(rel ${CMAKE_MATCH_1})
    string(REPLACE "${_semi}" ";" what "${CMAKE_MATCH_2}")
    set(acl ${CMAKE_MATCH_3})
    string(REGEX REPLACE "[ \n]+" " " params "${CMAKE_MATCH_4}")
    string(REGEX REPLACE ", uint64_t\\* workspaceSize, aclOpExecutor\\*\\* executor$" ", " params "${params}")
    if(NOT params MATCHES ", $")
      message(FATAL_ERROR "ember: ${acl}GetWorkspaceSize in device/npu/${_src_name} must end its parameters with "
                          "\"uint64_t* workspaceSize, aclOpExecutor** executor\", as CANN's headers do")
    endif()
    if(rel IN_LIST _cann_headers OR (rel IN_LIST EMBER_CANN_GENERATED AND NOT rel IN_LIST _own_headers))
      message(FATAL_ERROR "ember: ${rel} is declared by device/npu/${_src_name} and also written by hand or "
                          "generated from a table row; remove one of them")
    endif()
    _ember_aclnn_decl(decls ${acl} "${params}")
    string(MAKE_C_IDENTIFIER "${rel}" _key)
    if(NOT rel IN_LIST _own_headers)
      list(APPEND _own_headers ${rel})
      set(_what_${_key} "")
      set(_decls_${_key} "")
      set(_src_${_key} ${_src_name})
    endif()
    string(APPEND _what_${_key} " * ${acl}: ${what}.\n")
    string(APPEND _decls_${_key} "${decls}\n")
  endforeach()
  # A plain function of the header (not an op's two phases): "// CANN header function <path>: ..."
  # above its definition, declared as it is defined.
  string(REGEX MATCHALL "// CANN header function aclnnop/[a-z0-9_]+\\.h: [^\n]*\nextern \"C\" aclnnStatus aclnn[A-Za-z0-9]+\\([^)]*\\)"
         _fns "${_text}")
  foreach(def ${_fns})
    string(REGEX MATCH "^// CANN header function (aclnnop/[a-z0-9_]+\\.h): ([^\n]*)\nextern \"C\" aclnnStatus (aclnn[A-Za-z0-9]+)\\(([^)]*)\\)$"
           _m "${def}")
    set(rel ${CMAKE_MATCH_1})
    string(REPLACE "${_semi}" ";" what "${CMAKE_MATCH_2}")
    set(acl ${CMAKE_MATCH_3})
    string(REGEX REPLACE "[ \n]+" " " params "${CMAKE_MATCH_4}")
    string(MAKE_C_IDENTIFIER "${rel}" _key)
    if(NOT rel IN_LIST _own_headers)
      message(FATAL_ERROR "ember: ${acl} in device/npu/${_src_name} names ${rel}, which no op of that file declares "
                          "before it")
    endif()
    string(APPEND _what_${_key} " * ${acl}: ${what}.\n")
    string(APPEND _decls_${_key} "ACLNN_API aclnnStatus ${acl}(${params});\n\n")
  endforeach()
endforeach()
foreach(rel ${_own_headers})
  string(MAKE_C_IDENTIFIER "${rel}" _key)
  string(TOUPPER "${_key}" guard)
  set(what "${_what_${_key}}")
  set(decls "${_decls_${_key}}")
  file(CONFIGURE OUTPUT ${EMBER_CANN_INCLUDE}/${rel} @ONLY NEWLINE_STYLE UNIX CONTENT
"/* ember's emulated NPU: ${rel}, as in CANN's operator library.
 *
${what} *
 * Generated from the definitions in ember's device/npu/${_src_${_key}} (cmake/cann_headers.cmake).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_${guard}_
#define EMBER_CANN_${guard}_

#include \"aclnn/aclnn_base.h\"

#ifdef __cplusplus
extern \"C\" {
#endif

${decls}#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_${guard}_ */
")
  list(APPEND EMBER_CANN_GENERATED ${rel})
endforeach()

# 3. Every aclnnop header and every aclnn op they declare.
set(_aclnnop)
foreach(h ${_cann_headers} ${EMBER_CANN_GENERATED})
  if(h MATCHES "^aclnnop/aclnn_.*\\.h$")
    list(APPEND _aclnnop ${h})
  endif()
endforeach()
list(SORT _aclnnop)
set(_includes "")
set(_names)
foreach(h ${_aclnnop})
  string(APPEND _includes "#include \"${h}\"\n")
endforeach()
foreach(f ${_aclnnop} ${CMAKE_CURRENT_SOURCE_DIR}/device/npu/aclnn_ember.h)
  if(NOT IS_ABSOLUTE ${f})
    set(f ${EMBER_CANN_INCLUDE}/${f})
  endif()
  file(STRINGS ${f} _lines REGEX "GetWorkspaceSize\\(")
  foreach(l ${_lines})
    if(l MATCHES "ACLNN_API aclnnStatus (aclnn[A-Za-z0-9_]+)GetWorkspaceSize\\(")
      list(APPEND _names ${CMAKE_MATCH_1})
    endif()
  endforeach()
endforeach()
list(SORT _names)
set(_list "")
foreach(n ${_names})
  string(APPEND _list "  _(${n}) \\\n")
endforeach()
file(CONFIGURE OUTPUT ${EMBER_CANN_INCLUDE}/aclnnop/ember_aclnn_all.h @ONLY NEWLINE_STYLE UNIX CONTENT
"/* ember's emulated NPU: every aclnnop header, and EMBER_ACLNN_OP_NAMES, every aclnn op they and
 * ember's own aclnn_ember.h declare. Generated at configure time (cmake/cann_headers.cmake) from
 * the headers themselves. Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_EMBER_ACLNN_ALL_H_
#define EMBER_CANN_ACLNNOP_EMBER_ACLNN_ALL_H_

${_includes}
#define EMBER_ACLNN_OP_NAMES(_) \\
${_list}
#endif /* EMBER_CANN_ACLNNOP_EMBER_ACLNN_ALL_H_ */
")
list(APPEND EMBER_CANN_GENERATED aclnnop/ember_aclnn_all.h)
# (with the public declarations generated by cmake/public_ops.cmake, installed under include/ too)
list(JOIN EMBER_CANN_GENERATED "\n" _generated)
if(EMBER_GEN_HEADERS)
  list(JOIN EMBER_GEN_HEADERS "\n" _gen_public)
  string(APPEND _generated "\n${_gen_public}")
endif()
file(CONFIGURE OUTPUT ${EMBER_CANN_INCLUDE}/generated.txt @ONLY NEWLINE_STYLE UNIX CONTENT "${_generated}\n")
