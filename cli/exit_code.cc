#include "cli/common.h"

namespace kistore::cli {

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput: return kUsage;
    case ErrorCode::kNotFound: return kProblems;
    case ErrorCode::kCorruption: return kStoreError;
    case ErrorCode::kIO: return kStoreError;
    case ErrorCode::kConflict: return kStoreError;
    case ErrorCode::kRemote: return kRemoteError;
    case ErrorCode::kRefused: return kProblems;
  }
  return kStoreError;
}

}  // namespace kistore::cli
