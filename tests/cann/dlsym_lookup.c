/* What torch_npu's op-plugin does: load CANN's operator library by name at run time and look
 * the aclnn functions up by name. */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  const char* names[] = {"aclnnAddGetWorkspaceSize", "aclnnAdd", "aclnnMatmulGetWorkspaceSize",
                         "aclnnRmsNormGetWorkspaceSize", "aclCreateTensor", "aclrtMalloc"};
  size_t i;
  void* lib = dlopen("libopapi_math.so", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "dlopen(libopapi_math.so): %s\n", dlerror());
    return 1;
  }
  for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    void* f = dlsym(RTLD_DEFAULT, names[i]);
    printf("%s: %s\n", names[i], f ? "found" : "missing");
    if (!f) return 2;
  }
  return 0;
}
