// MpiCommunicator: a Communicator over MPI_COMM_WORLD (Open MPI), for
// `train_mpi` started by mpirun. MPI is initialised by Create and finalised
// by the destructor; errors are returned (MPI_ERRORS_RETURN) with the MPI
// error string, and a rank that dies ends the job through mpirun.
//
// Thread-safety: one thread calls it (MPI_THREAD_FUNNELED); the solver's
// worker threads never communicate.

#ifndef CHAINTAG_BASE_MPI_COMMUNICATOR_H_
#define CHAINTAG_BASE_MPI_COMMUNICATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/communicator.h"

namespace chaintag {

class MpiCommunicator : public Communicator {
 public:
  // Initialises MPI (once per process).
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> Create(int* argc,
                                                                 char*** argv);
  ~MpiCommunicator() override;
  // Ends every rank of the job with `code` (MPI_Abort): for a rank that
  // failed while the others may be waiting for it.
  static void Abort(int code);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  absl::Status AllGather(absl::string_view local, std::string* all,
                         std::vector<int64_t>* offsets) override;
  absl::Status Broadcast(int root, double* data, int64_t count) override;
  absl::Status Send(int to, const double* data, int64_t count) override;
  absl::Status Receive(int from, double* data, int64_t count) override;

 private:
  MpiCommunicator(int rank, int size) : rank_(rank), size_(size) {}

  const int rank_;
  const int size_;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_MPI_COMMUNICATOR_H_
