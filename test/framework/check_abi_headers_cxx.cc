// The same checks as check_abi_headers.c, compiled as C++20: the headers' C++
// static_asserts run, declaration order is enforced on every designated
// initializer, and g++ -Wextra wants every field named, so a reordered or
// grown struct shows here.
#include "check_abi_headers.c"
