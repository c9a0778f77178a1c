// kistore's one error type.
//
// Every failure that reaches a user is a kistore::Error: a closed set of codes
// (what kind of failure) and a message that already names the file, the
// line/column or JSON pointer, what was expected and what was found. The
// command-line layer maps codes to exit codes in exactly one place
// (cli/exit_code.cc); nothing below it knows about exit codes.
//
// Thread-safety: plain value type.
#pragma once

#include <stdexcept>
#include <string>

namespace kistore {

enum class ErrorCode {
  kInvalidInput,  // bad JSON, bad document, bad usage: nothing was written (exit 2)
  kNotFound,      // a REF or object that is not in the store (exit 1)
  kCorruption,    // the store holds bytes that do not match their names (exit 3)
  kIO,            // the file system or the git repository failed (exit 3)
  kRemote,        // a remote refused or could not be reached (exit 4)
  kRefused,       // data from a remote or a file that fails kistore's checks: nothing was taken in (exit 1)
  kConflict,      // another writer moved the branch first: retry (internal)
};

class Error : public std::runtime_error {
 public:
  // A NUL in the message (a name from the input, "\u0000" in JSON) is kept
  // as the six characters \u0000: what() is a C string, and the rest of the
  // message (what was expected, what was found) would be lost after it.
  Error(ErrorCode code, std::string message)
      : std::runtime_error(without_nul(std::move(message))), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  static std::string without_nul(std::string m);  // objects/error.cc
  ErrorCode code_;
};

inline Error InvalidInput(std::string m) { return Error(ErrorCode::kInvalidInput, std::move(m)); }
inline Error NotFound(std::string m) { return Error(ErrorCode::kNotFound, std::move(m)); }
inline Error Corruption(std::string m) { return Error(ErrorCode::kCorruption, std::move(m)); }
inline Error IOError(std::string m) { return Error(ErrorCode::kIO, std::move(m)); }
inline Error RemoteError(std::string m) { return Error(ErrorCode::kRemote, std::move(m)); }
inline Error Refused(std::string m) { return Error(ErrorCode::kRefused, std::move(m)); }

}  // namespace kistore
