/*
 * mpi.h: the MPI interface of Weft (MPI-3.1 names and signatures), for C and C++.
 *
 * A handle is a pointer to an object of framework/mpi; C code never sees inside one. A
 * predefined handle is the address of an object the library exports (MPI_COMM_WORLD is
 * &weft_mpi_comm_world), so it is a link-time constant usable in static initializers; the null
 * handles are null pointers.
 */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ versions */
#define MPI_VERSION    3
#define MPI_SUBVERSION 1

/* ------------------------------------------------------------------ handle types */
typedef struct weft_comm *MPI_Comm;
typedef struct weft_group *MPI_Group;
typedef struct weft_datatype *MPI_Datatype;
typedef struct weft_request *MPI_Request;
typedef struct weft_errhandler *MPI_Errhandler;
typedef struct weft_op *MPI_Op;
typedef struct weft_message *MPI_Message;
typedef struct weft_info *MPI_Info;

typedef ptrdiff_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int _cancelled;
    size_t _ucount; /* bytes received */
} MPI_Status;
/* MPI_Status as an array of MPI_Fint (MPI_Status_c2f, MPI_Status_f2c). */
#define MPI_STATUS_SIZE 6

typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn; /* the MPI-2.0 name */

/* Attribute callbacks (MPI-3.1 6.7), and the MPI-1 names of the communicator ones. */
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;

/* Generalized requests' callbacks (MPI-3.1 12.2). */
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef MPI_Comm_delete_attr_function MPI_Delete_function;

/* ------------------------------------------------------------------ error classes */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               7
#define MPI_ERR_ROOT                  8
#define MPI_ERR_GROUP                 9
#define MPI_ERR_OP                    10
#define MPI_ERR_TOPOLOGY              11
#define MPI_ERR_DIMS                  12
#define MPI_ERR_ARG                   13
#define MPI_ERR_UNKNOWN               14
#define MPI_ERR_TRUNCATE              15
#define MPI_ERR_OTHER                 16
#define MPI_ERR_INTERN                17
#define MPI_ERR_IN_STATUS             18
#define MPI_ERR_PENDING               19
#define MPI_ERR_ACCESS                20
#define MPI_ERR_AMODE                 21
#define MPI_ERR_ASSERT                22
#define MPI_ERR_BAD_FILE              23
#define MPI_ERR_BASE                  24
#define MPI_ERR_CONVERSION            25
#define MPI_ERR_DISP                  26
#define MPI_ERR_DUP_DATAREP           27
#define MPI_ERR_FILE_EXISTS           28
#define MPI_ERR_FILE_IN_USE           29
#define MPI_ERR_FILE                  30
#define MPI_ERR_INFO_KEY              31
#define MPI_ERR_INFO_NOKEY            32
#define MPI_ERR_INFO_VALUE            33
#define MPI_ERR_INFO                  34
#define MPI_ERR_IO                    35
#define MPI_ERR_KEYVAL                36
#define MPI_ERR_LOCKTYPE              37
#define MPI_ERR_NAME                  38
#define MPI_ERR_NO_MEM                39
#define MPI_ERR_NOT_SAME              40
#define MPI_ERR_NO_SPACE              41
#define MPI_ERR_NO_SUCH_FILE          42
#define MPI_ERR_PORT                  43
#define MPI_ERR_QUOTA                 44
#define MPI_ERR_READ_ONLY             45
#define MPI_ERR_RMA_CONFLICT          46
#define MPI_ERR_RMA_SYNC              47
#define MPI_ERR_SERVICE               48
#define MPI_ERR_SIZE                  49
#define MPI_ERR_SPAWN                 50
#define MPI_ERR_UNSUPPORTED_DATAREP   51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN                   53
#define MPI_ERR_RMA_RANGE             54
#define MPI_ERR_RMA_ATTACH            55
#define MPI_ERR_RMA_SHARED            56
#define MPI_ERR_RMA_FLAVOR            57
/* The tool information interface's (MPI_T_*, MPI-3.1 14.3.9). */
#define MPI_T_ERR_MEMORY            58
#define MPI_T_ERR_NOT_INITIALIZED   59
#define MPI_T_ERR_CANNOT_INIT       60
#define MPI_T_ERR_INVALID_INDEX     61
#define MPI_T_ERR_INVALID_ITEM      62
#define MPI_T_ERR_INVALID_HANDLE    63
#define MPI_T_ERR_OUT_OF_HANDLES    64
#define MPI_T_ERR_OUT_OF_SESSIONS   65
#define MPI_T_ERR_INVALID_SESSION   66
#define MPI_T_ERR_CVAR_SET_NOT_NOW  67
#define MPI_T_ERR_CVAR_SET_NEVER    68
#define MPI_T_ERR_PVAR_NO_STARTSTOP 69
#define MPI_T_ERR_PVAR_NO_WRITE     70
#define MPI_T_ERR_PVAR_NO_ATOMIC    71
#define MPI_T_ERR_INVALID_NAME      72
#define MPI_T_ERR_INVALID           73
/* User Level Failure Mitigation (the values Open MPI uses). */
#define MPIX_ERR_PROC_FAILED         75
#define MPIX_ERR_PROC_FAILED_PENDING 76
#define MPIX_ERR_REVOKED             77
#define MPI_ERR_LASTCODE             92

/* ------------------------------------------------------------------ ranks, tags, results */
#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL  (-2)
#define MPI_ROOT       (-4)
#define MPI_ANY_TAG    (-1)
#define MPI_UNDEFINED  (-32766)

#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* Attribute keys of MPI_COMM_WORLD. */
#define MPI_KEYVAL_INVALID  (-1)
#define MPI_TAG_UB          0
#define MPI_HOST            1
#define MPI_IO              2
#define MPI_WTIME_IS_GLOBAL 3
#define MPI_APPNUM          4
#define MPI_LASTUSEDCODE    5
#define MPI_UNIVERSE_SIZE   6

#define MPI_COMM_TYPE_SHARED 0

/* Process topologies (MPI_Topo_test), and the weight arrays of distributed graphs that mean "no
 * weights" and "no edges, but weighted": the library's own objects, which no array of the
 * program can be (real objects, so that compilers see a valid array where one is expected). */
#define MPI_GRAPH         1
#define MPI_CART          2
#define MPI_DIST_GRAPH    3
extern int weft_mpi_unweighted[1];
extern int weft_mpi_weights_empty[1];
#define MPI_UNWEIGHTED    ((int *)weft_mpi_unweighted)
#define MPI_WEIGHTS_EMPTY ((int *)weft_mpi_weights_empty)
#define MPI_COMBINER_NAMED          0
#define MPI_COMBINER_DUP            1
#define MPI_COMBINER_CONTIGUOUS     2
#define MPI_COMBINER_VECTOR         3
#define MPI_COMBINER_HVECTOR        4
#define MPI_COMBINER_INDEXED        5
#define MPI_COMBINER_HINDEXED       6
#define MPI_COMBINER_INDEXED_BLOCK  7
#define MPI_COMBINER_HINDEXED_BLOCK 8
#define MPI_COMBINER_STRUCT         9
#define MPI_COMBINER_SUBARRAY       10
#define MPI_COMBINER_RESIZED        11
#define MPI_COMBINER_DARRAY         12
#define MPI_COMBINER_F90_REAL       13
#define MPI_COMBINER_F90_COMPLEX    14
#define MPI_COMBINER_F90_INTEGER    15

/* MPI_Type_match_size's classes. */
#define MPI_TYPECLASS_REAL    1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

#define MPI_ORDER_C       0
#define MPI_ORDER_FORTRAN 1

/* MPI_Type_create_darray's distributions. */
#define MPI_DISTRIBUTE_BLOCK     0
#define MPI_DISTRIBUTE_CYCLIC    1
#define MPI_DISTRIBUTE_NONE      2
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           256
#define MPI_MAX_OBJECT_NAME            64
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY               36
#define MPI_MAX_INFO_VAL               256
#define MPI_BSEND_OVERHEAD             64

#define MPI_BOTTOM          ((void *)0)
#define MPI_IN_PLACE        ((void *)1)
#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)

/* ------------------------------------------------------------------ predefined handles */
extern struct weft_comm weft_mpi_comm_world;
extern struct weft_comm weft_mpi_comm_self;
extern struct weft_group weft_mpi_group_empty;
extern struct weft_errhandler weft_mpi_errors_are_fatal;
extern struct weft_errhandler weft_mpi_errors_return;
extern struct weft_message weft_mpi_message_no_proc;
extern struct weft_info weft_mpi_info_env;

#define MPI_COMM_WORLD       (&weft_mpi_comm_world)
#define MPI_COMM_SELF        (&weft_mpi_comm_self)
#define MPI_COMM_NULL        ((MPI_Comm)0)
#define MPI_GROUP_EMPTY      (&weft_mpi_group_empty)
#define MPI_GROUP_NULL       ((MPI_Group)0)
#define MPI_REQUEST_NULL     ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL  ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL (&weft_mpi_errors_are_fatal)
#define MPI_ERRORS_RETURN    (&weft_mpi_errors_return)
#define MPI_MESSAGE_NULL     ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC  (&weft_mpi_message_no_proc)
#define MPI_DATATYPE_NULL    ((MPI_Datatype)0)
#define MPI_OP_NULL          ((MPI_Op)0)
#define MPI_INFO_NULL        ((MPI_Info)0)
#define MPI_INFO_ENV         (&weft_mpi_info_env)

/* The predefined attribute callbacks: functions of the library (not MPI functions, so without
 * PMPI_ names), under their MPI names. */
MPI_Comm_copy_attr_function weft_mpi_comm_null_copy_fn;
MPI_Comm_copy_attr_function weft_mpi_comm_dup_fn;
MPI_Comm_delete_attr_function weft_mpi_comm_null_delete_fn;
MPI_Type_copy_attr_function weft_mpi_type_null_copy_fn;
MPI_Type_copy_attr_function weft_mpi_type_dup_fn;
MPI_Type_delete_attr_function weft_mpi_type_null_delete_fn;

#define MPI_COMM_NULL_COPY_FN   weft_mpi_comm_null_copy_fn
#define MPI_COMM_DUP_FN         weft_mpi_comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN weft_mpi_comm_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN   weft_mpi_type_null_copy_fn
#define MPI_TYPE_DUP_FN         weft_mpi_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN weft_mpi_type_null_delete_fn
#define MPI_NULL_COPY_FN        weft_mpi_comm_null_copy_fn
#define MPI_DUP_FN              weft_mpi_comm_dup_fn
#define MPI_NULL_DELETE_FN      weft_mpi_comm_null_delete_fn

/* ------------------------------------------------------------------ predefined datatypes */
extern struct weft_datatype weft_mpi_char;
extern struct weft_datatype weft_mpi_signed_char;
extern struct weft_datatype weft_mpi_unsigned_char;
extern struct weft_datatype weft_mpi_byte;
extern struct weft_datatype weft_mpi_short;
extern struct weft_datatype weft_mpi_unsigned_short;
extern struct weft_datatype weft_mpi_int;
extern struct weft_datatype weft_mpi_unsigned;
extern struct weft_datatype weft_mpi_long;
extern struct weft_datatype weft_mpi_unsigned_long;
extern struct weft_datatype weft_mpi_long_long_int;
extern struct weft_datatype weft_mpi_unsigned_long_long;
extern struct weft_datatype weft_mpi_float;
extern struct weft_datatype weft_mpi_double;
extern struct weft_datatype weft_mpi_long_double;
extern struct weft_datatype weft_mpi_wchar;
extern struct weft_datatype weft_mpi_c_bool;
extern struct weft_datatype weft_mpi_int8_t;
extern struct weft_datatype weft_mpi_int16_t;
extern struct weft_datatype weft_mpi_int32_t;
extern struct weft_datatype weft_mpi_int64_t;
extern struct weft_datatype weft_mpi_uint8_t;
extern struct weft_datatype weft_mpi_uint16_t;
extern struct weft_datatype weft_mpi_uint32_t;
extern struct weft_datatype weft_mpi_uint64_t;
extern struct weft_datatype weft_mpi_aint;
extern struct weft_datatype weft_mpi_offset;
extern struct weft_datatype weft_mpi_count;
extern struct weft_datatype weft_mpi_c_float_complex;
extern struct weft_datatype weft_mpi_c_double_complex;
extern struct weft_datatype weft_mpi_c_long_double_complex;
extern struct weft_datatype weft_mpi_packed;
extern struct weft_datatype weft_mpi_float_int;
extern struct weft_datatype weft_mpi_double_int;
extern struct weft_datatype weft_mpi_long_int;
extern struct weft_datatype weft_mpi_2int;
extern struct weft_datatype weft_mpi_short_int;
extern struct weft_datatype weft_mpi_long_double_int;
extern struct weft_datatype weft_mpi_integer;
extern struct weft_datatype weft_mpi_real;
extern struct weft_datatype weft_mpi_double_precision;
extern struct weft_datatype weft_mpi_logical;
extern struct weft_datatype weft_mpi_character;
extern struct weft_datatype weft_mpi_complex;
extern struct weft_datatype weft_mpi_double_complex;
extern struct weft_datatype weft_mpi_2integer;

#define MPI_CHAR                  (&weft_mpi_char)
#define MPI_SIGNED_CHAR           (&weft_mpi_signed_char)
#define MPI_UNSIGNED_CHAR         (&weft_mpi_unsigned_char)
#define MPI_BYTE                  (&weft_mpi_byte)
#define MPI_SHORT                 (&weft_mpi_short)
#define MPI_UNSIGNED_SHORT        (&weft_mpi_unsigned_short)
#define MPI_INT                   (&weft_mpi_int)
#define MPI_UNSIGNED              (&weft_mpi_unsigned)
#define MPI_LONG                  (&weft_mpi_long)
#define MPI_UNSIGNED_LONG         (&weft_mpi_unsigned_long)
#define MPI_LONG_LONG_INT         (&weft_mpi_long_long_int)
#define MPI_LONG_LONG             MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG    (&weft_mpi_unsigned_long_long)
#define MPI_FLOAT                 (&weft_mpi_float)
#define MPI_DOUBLE                (&weft_mpi_double)
#define MPI_LONG_DOUBLE           (&weft_mpi_long_double)
#define MPI_WCHAR                 (&weft_mpi_wchar)
#define MPI_C_BOOL                (&weft_mpi_c_bool)
#define MPI_INT8_T                (&weft_mpi_int8_t)
#define MPI_INT16_T               (&weft_mpi_int16_t)
#define MPI_INT32_T               (&weft_mpi_int32_t)
#define MPI_INT64_T               (&weft_mpi_int64_t)
#define MPI_UINT8_T               (&weft_mpi_uint8_t)
#define MPI_UINT16_T              (&weft_mpi_uint16_t)
#define MPI_UINT32_T              (&weft_mpi_uint32_t)
#define MPI_UINT64_T              (&weft_mpi_uint64_t)
#define MPI_AINT                  (&weft_mpi_aint)
#define MPI_OFFSET                (&weft_mpi_offset)
#define MPI_COUNT                 (&weft_mpi_count)
#define MPI_C_FLOAT_COMPLEX       (&weft_mpi_c_float_complex)
#define MPI_C_COMPLEX             MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX      (&weft_mpi_c_double_complex)
#define MPI_C_LONG_DOUBLE_COMPLEX (&weft_mpi_c_long_double_complex)
#define MPI_PACKED                (&weft_mpi_packed)
#define MPI_FLOAT_INT             (&weft_mpi_float_int)
#define MPI_DOUBLE_INT            (&weft_mpi_double_int)
#define MPI_LONG_INT              (&weft_mpi_long_int)
#define MPI_2INT                  (&weft_mpi_2int)
#define MPI_SHORT_INT             (&weft_mpi_short_int)
#define MPI_LONG_DOUBLE_INT       (&weft_mpi_long_double_int)
/* Fortran types, as C sees them. */
#define MPI_INTEGER          (&weft_mpi_integer)
#define MPI_REAL             (&weft_mpi_real)
#define MPI_DOUBLE_PRECISION (&weft_mpi_double_precision)
#define MPI_LOGICAL          (&weft_mpi_logical)
#define MPI_CHARACTER        (&weft_mpi_character)
#define MPI_COMPLEX          (&weft_mpi_complex)
#define MPI_DOUBLE_COMPLEX   (&weft_mpi_double_complex)
#define MPI_2INTEGER         (&weft_mpi_2integer)

/* Predefined reduction operations. */
extern struct weft_op weft_mpi_op_max;
extern struct weft_op weft_mpi_op_min;
extern struct weft_op weft_mpi_op_sum;
extern struct weft_op weft_mpi_op_prod;
extern struct weft_op weft_mpi_op_land;
extern struct weft_op weft_mpi_op_band;
extern struct weft_op weft_mpi_op_lor;
extern struct weft_op weft_mpi_op_bor;
extern struct weft_op weft_mpi_op_lxor;
extern struct weft_op weft_mpi_op_bxor;
extern struct weft_op weft_mpi_op_minloc;
extern struct weft_op weft_mpi_op_maxloc;
extern struct weft_op weft_mpi_op_replace;
extern struct weft_op weft_mpi_op_no_op;

#define MPI_MAX     (&weft_mpi_op_max)
#define MPI_MIN     (&weft_mpi_op_min)
#define MPI_SUM     (&weft_mpi_op_sum)
#define MPI_PROD    (&weft_mpi_op_prod)
#define MPI_LAND    (&weft_mpi_op_land)
#define MPI_BAND    (&weft_mpi_op_band)
#define MPI_LOR     (&weft_mpi_op_lor)
#define MPI_BOR     (&weft_mpi_op_bor)
#define MPI_LXOR    (&weft_mpi_op_lxor)
#define MPI_BXOR    (&weft_mpi_op_bxor)
#define MPI_MINLOC  (&weft_mpi_op_minloc)
#define MPI_MAXLOC  (&weft_mpi_op_maxloc)
#define MPI_REPLACE (&weft_mpi_op_replace)
#define MPI_NO_OP   (&weft_mpi_op_no_op)

/* ------------------------------------------------------------------ environment */
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);
int MPI_Initialized(int *flag);
int MPI_Finalized(int *flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Get_processor_name(char *name, int *resultlen);
int MPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);
int MPI_Query_thread(int *provided);
/* For profiling tools, which define their own (MPI-3.1 section 14.2.4); the library ignores it. */
int MPI_Pcontrol(const int level, ...);
int MPI_Is_thread_main(int *flag);
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int MPI_Free_mem(void *base);

/* ------------------------------------------------------------------ errors */
int MPI_Error_class(int errorcode, int *errorclass);
int MPI_Error_string(int errorcode, char *string, int *resultlen);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                               MPI_Errhandler *errhandler);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Errhandler_free(MPI_Errhandler *errhandler);
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
/* User error classes and codes: above MPI_ERR_LASTCODE (MPI_LASTUSEDCODE is the largest). */
int MPI_Add_error_class(int *errorclass);
int MPI_Add_error_code(int errorclass, int *errorcode);
int MPI_Add_error_string(int errorcode, const char *string);

/* ------------------------------------------------------------------ communicators */
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int MPI_Comm_group(MPI_Comm comm, MPI_Group *group);
int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
int MPI_Comm_test_inter(MPI_Comm comm, int *flag);
int MPI_Comm_remote_size(MPI_Comm comm, int *size);
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm);
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm);
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);

/* ------------------------------------------------------------------ attributes */
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state);
int MPI_Comm_free_keyval(int *comm_keyval);
int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                           void *extra_state);
int MPI_Type_free_keyval(int *type_keyval);
int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val);
int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag);
int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval);
/* The MPI-1 names (deprecated since MPI-2.0). */
int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state);
int MPI_Keyval_free(int *keyval);
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
int MPI_Attr_delete(MPI_Comm comm, int keyval);

/* ------------------------------------------------------------------ info objects */
int MPI_Info_create(MPI_Info *info);
int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
int MPI_Info_free(MPI_Info *info);
int MPI_Info_set(MPI_Info info, const char *key, const char *value);
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);
int MPI_Info_delete(MPI_Info info, const char *key);
int MPI_Info_get_nkeys(MPI_Info info, int *nkeys);
int MPI_Info_get_nthkey(MPI_Info info, int n, char *key);
int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);

/* ------------------------------------------------------------------ groups */
int MPI_Group_size(MPI_Group group, int *size);
int MPI_Group_rank(MPI_Group group, int *rank);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
int MPI_Group_free(MPI_Group *group);

/* ------------------------------------------------------------------ datatypes */
int MPI_Type_size(MPI_Datatype datatype, int *size);
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype);
int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[],
                     MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_indexed_block(int count, int blocklength, const int displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype *newtype);
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                             const int starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype);
int MPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                           const int dargs[], const int psizes[], int order,
                           MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_commit(MPI_Datatype *datatype);
int MPI_Type_free(MPI_Datatype *datatype);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent);
int MPI_Get_address(const void *location, MPI_Aint *address);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
/* A predefined type of the class and size (MPI_TYPECLASS_INTEGER 4: MPI_INTEGER, and so on). */
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype);
/* The predefined types of Fortran 90's SELECTED_*_KIND(p, r): never freed. */
int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype);
int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype);
int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype);
int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner);
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[],
                          MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]);
int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name);
int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm);
int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);
/* MPI's portable representation: datarep "external32" (big-endian, the standard's sizes). */
int MPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                      void *outbuf, MPI_Aint outsize, MPI_Aint *position);
int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype);
int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint *size);
int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);

/* ------------------------------------------------------------------ point-to-point */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request);
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status);
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request);
int MPI_Start(MPI_Request *request);
int MPI_Startall(int count, MPI_Request array_of_requests[]);
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status);
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status);
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status);
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request);
int MPI_Buffer_attach(void *buffer, int size);
int MPI_Buffer_detach(void *buffer_addr, int *size);

/* ------------------------------------------------------------------ requests and statuses */
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[]);
int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status);
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Cancel(MPI_Request *request);
int MPI_Test_cancelled(const MPI_Status *status, int *flag);
int MPI_Request_free(MPI_Request *request);
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
/* For generalized requests and layered libraries: what a status reports. */
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);
/* Generalized requests (MPI-3.1 12.2): every completion call takes them. */
int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request);
int MPI_Grequest_complete(MPI_Request request);

/* ------------------------------------------------------------------ handle conversions */
/* C handles to Fortran integers and back (MPI-3.1 17.2.4; framework/mpi/mpi_handles.cc lists the
 * fixed values of the predefined and null handles). An index that names no live object converts
 * to the null handle. */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Info_c2f(MPI_Info info);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_Message_c2f(MPI_Message message);
MPI_Message MPI_Message_f2c(MPI_Fint message);
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);

/* ------------------------------------------------------------------ reduction operations */
int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int MPI_Op_free(MPI_Op *op);
int MPI_Op_commutative(MPI_Op op, int *commute);
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op);

/* ------------------------------------------------------------------ collectives */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm);

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request);
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request);
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request);
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request);
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request);
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request);
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request);

/* ------------------------------------------------------------------ process topologies */
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart);
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest);
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank);
int MPI_Cartdim_get(MPI_Comm comm, int *ndims);
int MPI_Dims_create(int nnodes, int ndims, int dims[]);
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph);
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank);
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[]);
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted);
int MPI_Topo_test(MPI_Comm comm, int *status);

/* Neighbourhood collectives (MPI-3.1 7.6). */
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm);
int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request);
int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request);

/* ------------------------------------------------------------------ tool information (14.3) */
/* Control variables are Weft's MCA parameters (weft_info lists them), categories are the
 * frameworks and components, performance variables what components measure. */
typedef struct weft_t_enum *MPI_T_enum;
typedef struct weft_t_cvar_handle *MPI_T_cvar_handle;
typedef struct weft_t_pvar_handle *MPI_T_pvar_handle;
typedef struct weft_t_pvar_session *MPI_T_pvar_session;

#define MPI_T_ENUM_NULL          ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL   ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL   ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL  ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES   ((MPI_T_pvar_handle)-1)

enum {
    MPI_T_VERBOSITY_USER_BASIC = 1,
    MPI_T_VERBOSITY_USER_DETAIL,
    MPI_T_VERBOSITY_USER_ALL,
    MPI_T_VERBOSITY_TUNER_BASIC,
    MPI_T_VERBOSITY_TUNER_DETAIL,
    MPI_T_VERBOSITY_TUNER_ALL,
    MPI_T_VERBOSITY_MPIDEV_BASIC,
    MPI_T_VERBOSITY_MPIDEV_DETAIL,
    MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
    MPI_T_BIND_NO_OBJECT = 0,
    MPI_T_BIND_MPI_COMM,
    MPI_T_BIND_MPI_DATATYPE,
    MPI_T_BIND_MPI_ERRHANDLER,
    MPI_T_BIND_MPI_FILE,
    MPI_T_BIND_MPI_GROUP,
    MPI_T_BIND_MPI_OP,
    MPI_T_BIND_MPI_REQUEST,
    MPI_T_BIND_MPI_WIN,
    MPI_T_BIND_MPI_MESSAGE,
    MPI_T_BIND_MPI_INFO
};
enum {
    MPI_T_SCOPE_CONSTANT = 0,
    MPI_T_SCOPE_READONLY,
    MPI_T_SCOPE_LOCAL,
    MPI_T_SCOPE_GROUP,
    MPI_T_SCOPE_GROUP_EQ,
    MPI_T_SCOPE_ALL,
    MPI_T_SCOPE_ALL_EQ
};
enum {
    MPI_T_PVAR_CLASS_STATE = 0,
    MPI_T_PVAR_CLASS_LEVEL,
    MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_PERCENTAGE,
    MPI_T_PVAR_CLASS_HIGHWATERMARK,
    MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER,
    MPI_T_PVAR_CLASS_AGGREGATE,
    MPI_T_PVAR_CLASS_TIMER,
    MPI_T_PVAR_CLASS_GENERIC
};

int MPI_T_init_thread(int required, int *provided);
int MPI_T_finalize(void);
int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len);
int MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len);
int MPI_T_cvar_get_num(int *num_cvar);
int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *scope);
int MPI_T_cvar_get_index(const char *name, int *cvar_index);
int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                            int *count);
int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle);
int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf);
int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf);
int MPI_T_pvar_get_num(int *num_pvar);
int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                        int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                        char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
                        int *atomic);
int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index);
int MPI_T_pvar_session_create(MPI_T_pvar_session *session);
int MPI_T_pvar_session_free(MPI_T_pvar_session *session);
int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                            MPI_T_pvar_handle *handle, int *count);
int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle);
int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf);
int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle);
int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf);
int MPI_T_category_get_num(int *num_cat);
int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                            int *num_cvars, int *num_pvars, int *num_categories);
int MPI_T_category_get_index(const char *name, int *cat_index);
int MPI_T_category_get_cvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_pvars(int cat_index, int len, int indices[]);
int MPI_T_category_get_categories(int cat_index, int len, int indices[]);
int MPI_T_category_changed(int *stamp);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The profiling interface: every function above, and those of mpi-ext.h, as PMPI_ (or PMPIX_).
 * The MPI_ names are weak aliases of these, so a tool may define MPI_Send and call PMPI_Send. */
#include <weft/pmpi.h>

#endif /* WEFT_MPI_H */
