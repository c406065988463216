// A FHIR R4 record server of our own (DESIGN.md "FHIR environment"; seed 002 §3, §6, R3):
// resources in SQLite (in memory), searched as agents search them and written as a record
// server answers writes. It is a pure request -> response function, so an audit calls it
// in process (no sockets) and `noisefloor serve-fhir` puts the same function behind
// cpp-httplib (fhir/http_server.h).
//
// Searches (GET [base]Type?params): Patient by identifier ([system|]value), _id, family,
// given, name, birthdate; every other type by patient/subject ("Patient/X" or "X"), code
// (comma = OR; [system|]code; matches a coding's code or code.text), date (repeatable,
// prefixes eq ge gt le lt; against effectiveDateTime, authoredOn, recordedDate or
// occurrenceDateTime) and category. Result control: _sort (date, -date, _id, -_id;
// without it rows come in insertion order, as a database returns them), _count (default
// 20, at most 1000), _getpagesoffset (paging; `next` links carry it). A searchset Bundle
// has `total`, a `self` link, a `next` link while rows remain, and entries with fullUrl.
// GET [base]Type/id reads one resource (404 OperationOutcome when absent). _format and
// _pretty are accepted and ignored; any other parameter is a 400 (as HAPI answers an
// unknown search parameter).
//
// Writes (POST): a typed endpoint (Observation, MedicationRequest, ServiceRequest,
// Condition, Procedure, ...) validates the body — JSON object, resourceType equal to the
// endpoint, the type's required elements and status/intent codes, a subject reference to
// a Patient the server holds — and answers 201 Created with Location
// [base]Type/id/_history/1 and the stored resource. POST to the base URL (a FHIR
// transaction endpoint, which needs a Bundle) or with a mismatched or missing type, a
// body that is not JSON, or a missing element is a 400 with an OperationOutcome naming
// the problem. Ids of written resources depend only on (session, type, body, how many
// writes the session made), so identical runs see identical Locations.
//
// Sessions: every call names a session ("" = global). A write made in session S is
// visible to S and to the global view only when S is "" (serve-fhir); an audit gives
// each draw its own session, so one run's writes never change another run's chart.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

struct sqlite3;

namespace nf {

/// One HTTP exchange with the server. `target` is what follows the base URL: "" (the
/// base itself), "Observation", "Observation?patient=S1&code=K", "Patient/S1".
struct FhirRequest {
  std::string method;  // "GET" or "POST"
  std::string target;
  std::string body;    // POST body as sent
};

struct FhirResponse {
  int status = 200;
  nlohmann::json body = nlohmann::json::object();  // a resource, Bundle or OperationOutcome
  std::string location;                            // 201 only: absolute URL
};

/// Parses a FHIR dateTime / date / partial date ("2023", "2023-11", "2023-11-13",
/// "2023-11-13T10:15", "2023-11-13T10:15:00", with optional fraction and "Z" or ±hh:mm;
/// no zone = UTC) into seconds since the Unix epoch (the start of the period for partial
/// dates). nullopt when the text is not one of these forms or a field is out of range.
std::optional<double> parse_fhir_datetime(const std::string& text);

/// The OperationOutcome of an error: {"resourceType":"OperationOutcome","issue":[{
/// "severity":"error","code":code,"diagnostics":diagnostics}]}.
nlohmann::json operation_outcome(const std::string& code, const std::string& diagnostics);

class FhirServer {
 public:
  /// An empty server whose absolute URLs start with `base_url` (ends with '/'; added when
  /// missing). Errors: Internal when SQLite cannot open an in-memory database.
  static Result<std::unique_ptr<FhirServer>> create(std::string base_url);
  ~FhirServer();
  FhirServer(const FhirServer&) = delete;
  FhirServer& operator=(const FhirServer&) = delete;

  const std::string& base_url() const { return base_url_; }

  /// Stores `resource` as part of the global chart (seeding). It must be an object with a
  /// string resourceType and id. Errors: InvalidArgument otherwise, or when (type, id) is
  /// already held.
  Status put(const nlohmann::json& resource);

  /// Answers one request. Thread-safe. Never throws.
  FhirResponse handle(const FhirRequest& req, const std::string& session = "");

  /// What handle() would answer for a POST without storing anything (seed 002 §6: what
  /// the record server would have said). Thread-safe.
  FhirResponse dry_run(const FhirRequest& req, const std::string& session = "");

  /// Number of resources held (global view), by type when `type` is non-empty.
  int64_t count(const std::string& type = "") const;

  /// The resource types a POST may create.
  static const std::vector<std::string>& writable_types();

 private:
  explicit FhirServer(std::string base_url);
  FhirResponse search(const std::string& type, const std::string& query, const std::string& session);
  FhirResponse read(const std::string& type, const std::string& id, const std::string& session);
  FhirResponse write(const FhirRequest& req, const std::string& session, bool store);

  std::string base_url_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mu_;
};

}  // namespace nf
