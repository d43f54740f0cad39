dnl WEFT_STATIC_LIST_INIT / WEFT_COMPONENT / WEFT_STATIC_LIST_FINISH:
dnl decide, for each component found by autogen.sh, whether it is built and
dnl whether it is linked into libweft (--enable-mca-static).

AC_DEFUN([WEFT_STATIC_LIST_INIT], [
    weft_component_summary=
    WEFT_STATIC_DECLS=
    WEFT_STATIC_ENTRIES=
    weft_static_requested=" $(echo "$enable_mca_static" | tr ',' ' ' | sed 's/:/-/g') "
    AS_IF([test "$enable_mca_static" = yes],
          [AC_MSG_ERROR([--enable-mca-static needs a list, e.g. --enable-mca-static=btl-self,boot])])
    AS_IF([test "$enable_mca_static" = no], [weft_static_requested=" "])
    weft_static_matched=" "
])

dnl WEFT_COMPONENT(framework, name)
AC_DEFUN([WEFT_COMPONENT], [
    weft_build=yes
    weft_why=
    m4_ifdef([WEFT_CONFIG_$1_$2],
             [WEFT_CONFIG_$1_$2([], [weft_build=no])])
    weft_static=no
    AS_CASE([$weft_static_requested],
        [*" $1-$2 "*], [weft_static=yes; weft_static_matched="${weft_static_matched}$1-$2 "],
        [*" $1 "*], [weft_static=yes; weft_static_matched="${weft_static_matched}$1 "])
    AS_IF([test "$weft_build" = yes],
          [AS_IF([test "$weft_static" = yes],
                 [weft_line="yes, static"
                  WEFT_STATIC_DECLS="$WEFT_STATIC_DECLS extern \"C\" const weft_$1_component_t mca_$1_$2_component;"
                  WEFT_STATIC_ENTRIES="$WEFT_STATIC_ENTRIES &mca_$1_$2_component.mca,"],
                 [weft_line="yes, loadable mca_$1_$2.so"])],
          [weft_line="no ($weft_why)"])
    weft_build_$1_$2=$weft_build
    weft_why_$1_$2=$weft_why
    weft_component_summary="$weft_component_summary  $1/$2: $weft_line
"
    AM_CONDITIONAL([WEFT_BUILD_$1_$2], [test "$weft_build" = yes])
    AM_CONDITIONAL([WEFT_STATIC_$1_$2], [test "$weft_build" = yes && test "$weft_static" = yes])
])

AC_DEFUN([WEFT_STATIC_LIST_FINISH], [
    for weft_req in $weft_static_requested; do
        AS_CASE([$weft_static_matched], [*" $weft_req "*], [],
                [AS_CASE([" $WEFT_FRAMEWORKS "],
                    [*" $weft_req "*], [AC_MSG_ERROR([--enable-mca-static: framework '$weft_req' has no components in this tree])],
                    [AC_MSG_ERROR([--enable-mca-static: no component or framework named '$weft_req' (components: m4_defn([WEFT_COMPONENT_LIST]); frameworks: $WEFT_FRAMEWORKS)])])])
    done
    AS_IF([test -z "$weft_component_summary"], [weft_component_summary="  (none in this tree)"])
    AC_SUBST([WEFT_STATIC_DECLS])
    AC_SUBST([WEFT_STATIC_ENTRIES])
])
