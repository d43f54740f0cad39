dnl Dependency probes. Each sets weft_have_<x> (yes/no), weft_<x>_why (why
dnl not, for the summary), weft_<x>_summary, and substitutes
dnl WEFT_<X>_CPPFLAGS, WEFT_<X>_LDFLAGS, WEFT_<X>_LIBS.

dnl WEFT_CHECK_PACKAGE(key, KEY, with-option, description, pkg-config module,
dnl                    header, library, function, version-command)
dnl --with-<option>: "no" skips it, "yes"/empty probes it (failing quietly
dnl unless given explicitly), a directory probes DIR/include and DIR/lib.
AC_DEFUN([WEFT_CHECK_PACKAGE], [
    AC_ARG_WITH([$3],
        [AS_HELP_STRING([--with-$3@<:@=DIR@:>@], [use $4 (from DIR if given); components that need it are not built without it (default: auto)])],
        [], [with_[]m4_translit([$3], [-], [_])=auto])
    weft_with=$with_[]m4_translit([$3], [-], [_])
    weft_have_$1=no
    weft_$1_why=
    $2_CPPFLAGS=
    $2_LDFLAGS=
    $2_LIBS=
    AS_CASE([$weft_with],
        [no], [weft_$1_why="disabled by --without-$3"],
        [yes|auto], [
            PKG_CHECK_MODULES([WEFT_$2_PC], [$5],
                [$2_CPPFLAGS=$WEFT_$2_PC_CFLAGS
                 $2_LIBS=$WEFT_$2_PC_LIBS],
                [$2_LIBS=-l$7])],
        [AS_IF([test -f "$weft_with/include/$6"], [],
               [AC_MSG_ERROR([--with-$3=$weft_with: $weft_with/include/$6 not found])])
         $2_CPPFLAGS="-I$weft_with/include"
         AS_IF([test -d "$weft_with/lib64"], [$2_LDFLAGS="-L$weft_with/lib64"], [$2_LDFLAGS="-L$weft_with/lib"])
         $2_LIBS=-l$7])
    AS_IF([test "$weft_with" != no], [
        weft_save_CPPFLAGS=$CPPFLAGS
        weft_save_LDFLAGS=$LDFLAGS
        weft_save_LIBS=$LIBS
        CPPFLAGS="$CPPFLAGS $$2_CPPFLAGS"
        LDFLAGS="$LDFLAGS $$2_LDFLAGS"
        LIBS="$$2_LIBS $LIBS"
        AC_CHECK_HEADER([$6],
            [AC_MSG_CHECKING([for $8 in $$2_LIBS])
             AC_LINK_IFELSE([AC_LANG_CALL([], [$8])],
                [AC_MSG_RESULT([yes])
                 weft_have_$1=yes],
                [AC_MSG_RESULT([no])
                 weft_$1_why="$8() not found in $$2_LIBS"])],
            [weft_$1_why="header $6 not found"])
        CPPFLAGS=$weft_save_CPPFLAGS
        LDFLAGS=$weft_save_LDFLAGS
        LIBS=$weft_save_LIBS
        AS_IF([test "$weft_have_$1" != yes && test "$weft_with" != auto],
              [AC_MSG_ERROR([--with-$3=$weft_with was given but $4 cannot be used: $weft_$1_why])])
    ])
    AS_IF([test "$weft_have_$1" = yes],
          [weft_$1_version=$($PKG_CONFIG --modversion $5 2>/dev/null || echo unknown)
           weft_$1_summary="yes ($weft_$1_version)"
           AC_DEFINE([WEFT_HAVE_$2], [1], [Whether $4 is available])
           AC_DEFINE_UNQUOTED([WEFT_$2_VERSION], ["$weft_$1_version"], [Version of $4 found by configure])],
          [weft_$1_summary="no ($weft_$1_why)"
           $2_CPPFLAGS=
           $2_LDFLAGS=
           $2_LIBS=
           AC_MSG_NOTICE([$4 not usable: $weft_$1_why; components needing it will not be built])])
    AM_CONDITIONAL([WEFT_HAVE_$2], [test "$weft_have_$1" = yes])
    AC_SUBST([$2_CPPFLAGS])
    AC_SUBST([$2_LDFLAGS])
    AC_SUBST([$2_LIBS])
])

AC_DEFUN([WEFT_CHECK_HWLOC], [
    WEFT_CHECK_PACKAGE([hwloc], [HWLOC], [hwloc], [hwloc (topology and locality)],
                       [hwloc], [hwloc.h], [hwloc], [hwloc_topology_init])
])
AC_DEFUN([WEFT_CHECK_VERBS], [
    WEFT_CHECK_PACKAGE([verbs], [VERBS], [verbs], [libibverbs (rdma-core)],
                       [libibverbs], [infiniband/verbs.h], [ibverbs], [ibv_get_device_list])
])
AC_DEFUN([WEFT_CHECK_OFI], [
    WEFT_CHECK_PACKAGE([ofi], [OFI], [ofi], [libfabric (OFI)],
                       [libfabric], [rdma/fabric.h], [fabric], [fi_getinfo])
])

dnl libltdl has no pkg-config file; probe the header and the library.
AC_DEFUN([WEFT_CHECK_LTDL], [
    weft_have_ltdl=no
    weft_ltdl_why=
    LTDL_LIBS=
    AC_CHECK_HEADER([ltdl.h],
        [AC_CHECK_LIB([ltdl], [lt_dlopenadvise],
            [weft_have_ltdl=yes
             LTDL_LIBS=-lltdl],
            [weft_ltdl_why="lt_dlopenadvise() not found in -lltdl"])],
        [weft_ltdl_why="header ltdl.h not found"])
    AS_IF([test "$weft_have_ltdl" = yes],
          [weft_ltdl_summary=yes
           AC_DEFINE([WEFT_HAVE_LTDL], [1], [Whether the libltdl loader backend is built])],
          [weft_ltdl_summary="no ($weft_ltdl_why)"
           AC_MSG_NOTICE([libltdl not usable: $weft_ltdl_why; only the dlopen loader backend is built])])
    AM_CONDITIONAL([WEFT_HAVE_LTDL], [test "$weft_have_ltdl" = yes])
    AC_SUBST([LTDL_LIBS])
])

dnl Check is needed only for make check.
AC_DEFUN([WEFT_CHECK_CHECK], [
    PKG_CHECK_MODULES([CHECK], [check >= 0.11],
        [weft_check_summary="yes ($($PKG_CONFIG --modversion check))"],
        [weft_check_summary="no (install the check package; make check will fail)"
         AC_MSG_WARN([Check (libcheck) not found: the unit tests cannot be built; install package 'check'])])
])
