/* ember's emulated NPU: CANN's hccl/hccl.h, the collective communication library, with CANN's
 * names, signatures and C linkage. Valid C (C99) and C++ (C++11).
 *
 * Collectives are enqueued on an aclrtStream like kernels: the call checks its arguments and
 * returns; the data moves when the stream reaches it, in stream order, and a failure there
 * (ranks that called different collectives, a rank that never came within HCCL_EXEC_TIMEOUT
 * seconds) is reported by the next synchronize of that stream. The ranks of a communicator made by
 * HcclCommInitAll are emulated NPUs of this process and exchange directly, as are those of
 * HcclGetRootInfo + HcclCommInitRootInfo called from several threads of one process (one per
 * device, as CANN's samples do); between processes (the same calls under mpirun, one rank per
 * process) the bytes travel over MPI. */
#ifndef EMBER_CANN_HCCL_HCCL_H_
#define EMBER_CANN_HCCL_HCCL_H_

#include <stddef.h>
#include <string.h>

#include "hccl/hccl_types.h"
#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A config with HCCL's defaults (buffer size 200 MB, not deterministic, no name), to be changed
 * and passed to HcclCommInitRootInfoConfig. Its header (size, magic word, version) marks it. */
static inline void HcclCommConfigInit(HcclCommConfig* config) {
  size_t size = sizeof(HcclCommConfig);
  uint32_t magic = HCCL_COMM_CONFIG_MAGIC_WORD, version = HCCL_COMM_CONFIG_VERSION;
  uint64_t zero = 0;
  memcpy(config->reserved, &size, sizeof size);
  memcpy(config->reserved + sizeof size, &magic, 4);
  memcpy(config->reserved + sizeof size + 4, &version, 4);
  memcpy(config->reserved + sizeof size + 8, &zero, 8);
  config->hcclBufferSize = HCCL_COMM_DEFAULT_BUFFSIZE;
  config->hcclDeterministic = HCCL_COMM_DEFAULT_DETERMINISTIC;
  config->hcclCommName[0] = '\0';
}

ACL_FUNC_VISIBILITY HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo);
ACL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                                    HcclComm* comm);
ACL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo,
                                                          uint32_t rank, const HcclCommConfig* config,
                                                          HcclComm* comm);
/* Rank `rank` of the ranks a rank table file lists (JSON, version 1.0: server_list[].device[] with
 * device_id and rank_id); the calling thread's device must be the rank's device_id. The ranks
 * meet as those of one root info do (threads of this process, or the processes of an mpirun job). */
ACL_FUNC_VISIBILITY HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm);
ACL_FUNC_VISIBILITY HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank,
                                                             HcclCommConfig* config, HcclComm* comm);
/* One communicator per device in devices[0 .. ndev-1], all in this process: comms[i] is rank i. */
ACL_FUNC_VISIBILITY HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms);
ACL_FUNC_VISIBILITY HcclResult HcclCommDestroy(HcclComm comm);
ACL_FUNC_VISIBILITY HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize);
ACL_FUNC_VISIBILITY HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank);
ACL_FUNC_VISIBILITY HcclResult HcclGetCommName(HcclComm comm, char* commName);
/* HCCL_E_TIMEOUT or HCCL_E_PARA once a collective of comm failed on its stream, else HCCL_SUCCESS. */
ACL_FUNC_VISIBILITY HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError);
ACL_FUNC_VISIBILITY const char* HcclGetErrorString(HcclResult code);

ACL_FUNC_VISIBILITY HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                             HcclReduceOp op, HcclComm comm, aclrtStream stream);
ACL_FUNC_VISIBILITY HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root,
                                             HcclComm comm, aclrtStream stream);
ACL_FUNC_VISIBILITY HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount,
                                             HcclDataType dataType, HcclComm comm, aclrtStream stream);
ACL_FUNC_VISIBILITY HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount,
                                                 HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                                 aclrtStream stream);
ACL_FUNC_VISIBILITY HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                                        HcclComm comm, aclrtStream stream);
ACL_FUNC_VISIBILITY HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                                        HcclComm comm, aclrtStream stream);
ACL_FUNC_VISIBILITY HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);
/* recvBuf = op over the ranks' sendBuf, on root only (recvBuf may be NULL elsewhere). */
ACL_FUNC_VISIBILITY HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                          HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream);
/* Rank r receives block r (recvCount elements) of root's sendBuf (NULL elsewhere). */
ACL_FUNC_VISIBILITY HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                                           uint32_t root, HcclComm comm, aclrtStream stream);
/* Block j of rank i's sendBuf becomes block i of rank j's recvBuf (sendCount == recvCount elements
 * per block, one dtype). sendBuf and recvBuf must not overlap. */
ACL_FUNC_VISIBILITY HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType,
                                            const void* recvBuf, uint64_t recvCount, HcclDataType recvType,
                                            HcclComm comm, aclrtStream stream);
/* The same with per-rank counts and offsets (host arrays of uint64_t, one entry per rank, in
 * elements): rank i sends sendCounts[j] elements from sendBuf + sdispls[j] to rank j, which
 * receives them at recvBuf + rdispls[i]; its recvCounts[i] must equal them. */
ACL_FUNC_VISIBILITY HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls,
                                             HcclDataType sendType, const void* recvBuf, const void* recvCounts,
                                             const void* rdispls, HcclDataType recvType, HcclComm comm,
                                             aclrtStream stream);
/* AlltoAllV with the counts as one matrix every rank passes alike (host, uint64_t, nRanks x
 * nRanks): row i holds what rank i sends to each rank; blocks lie back to back in rank order. */
ACL_FUNC_VISIBILITY HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix, HcclDataType sendType,
                                              const void* recvBuf, HcclDataType recvType, HcclComm comm,
                                              aclrtStream stream);
/* itemNum sends and receives of this rank issued together (as in a group): a ring where every
 * rank sends first completes. */
ACL_FUNC_VISIBILITY HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                                 aclrtStream stream);
/* Calls between HcclGroupStart and HcclGroupEnd (on this thread) are issued together at
 * HcclGroupEnd: sends and receives that would wait for each other one at a time (a ring, a
 * pairwise exchange) complete. Groups nest; the outermost HcclGroupEnd issues them. */
ACL_FUNC_VISIBILITY HcclResult HcclGroupStart(void);
ACL_FUNC_VISIBILITY HcclResult HcclGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_HCCL_HCCL_H_ */
