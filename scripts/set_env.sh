# ember: the environment for building and running CANN host code on the emulated NPU, as CANN's
# set_env.sh sets it for a toolkit. Installed at the root of ember's install, which is laid out
# as a CANN toolkit (include/acl, include/aclnn, include/aclnnop, lib64/libascendcl.so, ...).
#   source <prefix>/set_env.sh        (bash)
_ember_cann_home=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASCEND_HOME_PATH=$_ember_cann_home
export ASCEND_TOOLKIT_HOME=$_ember_cann_home
# CANN's own CMake files read ASCEND_CUSTOM_PATH and ASCEND_PATH as well.
export ASCEND_CUSTOM_PATH=$_ember_cann_home
export LD_LIBRARY_PATH=$_ember_cann_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# lib64/cmake holds find_package's configs of CANN's tools: ASC (the Ascend C language) and tikicpulib.
export CMAKE_PREFIX_PATH=$_ember_cann_home:$_ember_cann_home/lib64/cmake${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
unset _ember_cann_home
