// Status and Result<T>: the one error vocabulary of noisefloor.
//
// Modelled on abseil's status/statusor: a function that can fail returns Status (no
// value) or Result<T> (a value or a Status). No exception crosses a library boundary;
// code that calls a throwing third-party API catches at the call site and converts.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nf {

/// Error codes, after abseil's canonical codes. The CLI maps them to exit codes
/// (util/exit_code.h): InvalidArgument/NotFound/FailedPrecondition/DataLoss/AlreadyExists
/// are input errors (2); Unavailable and DeadlineExceeded are backend errors (3).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input: a value out of range, a malformed file or field
  kNotFound,            // a named file, item, key or table that does not exist
  kAlreadyExists,       // a unique key that is taken
  kFailedPrecondition,  // the operation is refused in the current state
  kOutOfRange,          // an index or count past the end
  kDataLoss,            // a store or file that is corrupt or truncated
  kUnavailable,         // a backend or server that cannot be reached
  kDeadlineExceeded,    // a timeout
  kUndefined,           // a statistic that is mathematically undefined for this input
  kInternal,            // a broken invariant inside noisefloor (a bug)
  kUnimplemented,       // an operation this implementation (e.g. the PostgreSQL store) does not offer
};

/// Returns the stable lower-case name of `code`, e.g. "invalid_argument".
std::string_view status_code_name(StatusCode code);

/// A code plus a human-readable message. Default-constructed Status is OK.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose message is "`context`: <message>" (no-op for OK).
  Status with_context(std::string_view context) const;

  /// "invalid_argument: <message>", or "ok".
  std::string to_string() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status AlreadyExists(std::string message);
Status FailedPrecondition(std::string message);
Status OutOfRange(std::string message);
Status DataLoss(std::string message);
Status Unavailable(std::string message);
Status DeadlineExceeded(std::string message);
Status Undefined(std::string message);
Status Internal(std::string message);
Status Unimplemented(std::string message);

/// A value of type T or a non-OK Status. Accessing value() of an error is a bug
/// (asserts in debug builds).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like StatusOr
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  T& value() & { assert(ok()); return std::get<T>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace nf

#define NF_STATUS_CONCAT_INNER(a, b) a##b
#define NF_STATUS_CONCAT(a, b) NF_STATUS_CONCAT_INNER(a, b)

/// Returns from the enclosing function if `expr` (a Status) is not OK.
#define NF_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::nf::Status nf_status_tmp_ = (expr);         \
    if (!nf_status_tmp_.ok()) return nf_status_tmp_; \
  } while (0)

/// `NF_ASSIGN_OR_RETURN(auto x, f());` binds the value of a Result or returns its Status.
#define NF_ASSIGN_OR_RETURN(lhs, expr) \
  NF_ASSIGN_OR_RETURN_IMPL(NF_STATUS_CONCAT(nf_result_, __LINE__), lhs, expr)
#define NF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
