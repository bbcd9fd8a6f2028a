/* ember's emulated NPU: CANN's hccl/hccl_types.h (HCCL's status codes, data types, reduction
 * operations and root info), with CANN's names and values. Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_HCCL_HCCL_TYPES_H_
#define EMBER_CANN_HCCL_HCCL_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As in acl_base.h: in C++ the enums have int as their fixed underlying type. */
#ifdef __cplusplus
#define EMBER_HCCL_ENUM_BASE : int
#else
#define EMBER_HCCL_ENUM_BASE
#endif

/* CANN declares these as const uint32_t; in C a const is not a constant expression, so the
 * array bound is an enumerator there. */
#ifdef __cplusplus
static const uint32_t HCCL_ROOT_INFO_BYTES = 4108;
static const uint32_t COMM_NAME_MAX_LENGTH = 128;
static const uint32_t HCCL_COMM_CONFIG_INFO_BYTES = 24;
#else
enum { HCCL_ROOT_INFO_BYTES = 4108, COMM_NAME_MAX_LENGTH = 128, HCCL_COMM_CONFIG_INFO_BYTES = 24 };
#endif
static const uint32_t HCCL_COMM_CONFIG_MAGIC_WORD = 0xf0f0f0f0u;
static const uint32_t HCCL_COMM_CONFIG_VERSION = 2;
static const uint32_t HCCL_COMM_DEFAULT_BUFFSIZE = 200;
static const uint32_t HCCL_COMM_DEFAULT_DETERMINISTIC = 0;

typedef enum EMBER_HCCL_ENUM_BASE {
  HCCL_SUCCESS = 0,
  HCCL_E_PARA = 1,
  HCCL_E_PTR = 2,
  HCCL_E_MEMORY = 3,
  HCCL_E_INTERNAL = 4,
  HCCL_E_NOT_SUPPORT = 5,
  HCCL_E_NOT_FOUND = 6,
  HCCL_E_UNAVAIL = 7,
  HCCL_E_SYSCALL = 8,
  HCCL_E_TIMEOUT = 9,
  HCCL_E_OPEN_FILE_FAILURE = 10,
  HCCL_E_TCP_CONNECT = 11,
  HCCL_E_ROCE_CONNECT = 12,
  HCCL_E_TCP_TRANSFER = 13,
  HCCL_E_ROCE_TRANSFER = 14,
  HCCL_E_RUNTIME = 15,
  HCCL_E_DRV = 16,
  HCCL_E_PROFILING = 17,
  HCCL_E_CCE = 18,
  HCCL_E_NETWORK = 19,
  HCCL_E_AGAIN = 20,
  HCCL_E_REMOTE = 21,
  HCCL_E_RESERVED
} HcclResult;

typedef void* HcclComm;

typedef enum EMBER_HCCL_ENUM_BASE {
  HCCL_REDUCE_SUM = 0,
  HCCL_REDUCE_PROD = 1,
  HCCL_REDUCE_MAX = 2,
  HCCL_REDUCE_MIN = 3,
  HCCL_REDUCE_RESERVED
} HcclReduceOp;

typedef enum EMBER_HCCL_ENUM_BASE {
  HCCL_DATA_TYPE_INT8 = 0,
  HCCL_DATA_TYPE_INT16 = 1,
  HCCL_DATA_TYPE_INT32 = 2,
  HCCL_DATA_TYPE_FP16 = 3,
  HCCL_DATA_TYPE_FP32 = 4,
  HCCL_DATA_TYPE_INT64 = 5,
  HCCL_DATA_TYPE_UINT64 = 6,
  HCCL_DATA_TYPE_UINT8 = 7,
  HCCL_DATA_TYPE_UINT16 = 8,
  HCCL_DATA_TYPE_UINT32 = 9,
  HCCL_DATA_TYPE_FP64 = 10,
  HCCL_DATA_TYPE_BFP16 = 11,
  HCCL_DATA_TYPE_RESERVED
} HcclDataType;

/* Made by HcclGetRootInfo on the root rank and handed to the others (MPI_Bcast, a file, ...),
 * which pass it to HcclCommInitRootInfo. Opaque. */
typedef struct HcclRootInfoDef {
  char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

typedef enum EMBER_HCCL_ENUM_BASE { HCCL_DETERMINISTIC = 0, HCCL_CONFIG_RESERVED } HcclConfig;

union HcclConfigValue {
  int32_t value;
};

typedef struct HcclCommConfigDef {
  char reserved[HCCL_COMM_CONFIG_INFO_BYTES];
  uint32_t hcclBufferSize;
  uint32_t hcclDeterministic;
  char hcclCommName[COMM_NAME_MAX_LENGTH];
} HcclCommConfig;

/* HcclBatchSendRecv's tasks: a send or a receive of count elements to / from remoteRank. */
typedef enum EMBER_HCCL_ENUM_BASE { HCCL_SEND = 0, HCCL_RECV = 1, HCCL_SEND_RECV_RESERVED } HcclSendRecvType;

typedef struct HcclSendRecvItemDef {
  HcclSendRecvType sendRecvType;
  void* buf;
  uint64_t count;
  HcclDataType dataType;
  uint32_t remoteRank;
} HcclSendRecvItem;

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_HCCL_HCCL_TYPES_H_ */
