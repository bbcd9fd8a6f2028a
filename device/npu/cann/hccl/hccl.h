/* ember's emulated NPU: CANN's hccl/hccl.h, the collective communication library, with CANN's
 * names, signatures and C linkage. Valid C (C99) and C++ (C++11).
 *
 * Collectives are enqueued on an aclrtStream like kernels: the call checks its arguments and
 * returns; the data moves when the stream reaches it, in stream order, and a failure there
 * (ranks that called different collectives, a rank that never came within HCCL_EXEC_TIMEOUT
 * seconds) is reported by the next synchronize of that stream. The ranks of a communicator made by
 * HcclCommInitAll are emulated NPUs of this process and exchange directly; between processes
 * (HcclGetRootInfo + HcclCommInitRootInfo under mpirun) the bytes travel over MPI. */
#ifndef EMBER_CANN_HCCL_HCCL_H_
#define EMBER_CANN_HCCL_HCCL_H_

#include "hccl/hccl_types.h"
#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo);
ACL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                                    HcclComm* comm);
ACL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo,
                                                          uint32_t rank, const HcclCommConfig* config,
                                                          HcclComm* comm);
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

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_HCCL_HCCL_H_ */
