dnl WEFT_CXX20: make the C++ compiler speak C++20, or stop.
AC_DEFUN([WEFT_CXX20], [
    AC_LANG_PUSH([C++])
    AC_MSG_CHECKING([whether $CXX supports C++20 with -std=c++20])
    weft_save_CXXFLAGS=$CXXFLAGS
    CXXFLAGS="$CXXFLAGS -std=c++20"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <span>
#include <concepts>
struct S { int a; int b; };
template <std::integral T> constexpr T twice(T v) { return 2 * v; }]],
                                       [[S s{.a = 1, .b = twice(2)}; std::span<int> sp(&s.a, 1); return sp[0] - 1;]])],
        [AC_MSG_RESULT([yes])
         CXX="$CXX -std=c++20"],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([Weft needs a C++20 compiler (g++ 12 or newer); set CXX])])
    CXXFLAGS=$weft_save_CXXFLAGS
    AC_LANG_POP([C++])
])
