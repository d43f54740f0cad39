dnl btl/openib needs libibverbs (rdma-core).
AC_DEFUN([WEFT_CONFIG_btl_openib], [
    AS_IF([test "$weft_have_verbs" = yes], [$1],
          [weft_why="needs libibverbs: $weft_verbs_why"
           $2])
])
