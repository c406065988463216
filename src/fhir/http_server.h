// `noisefloor serve-fhir`: the record server of fhir/fhir_server.h over HTTP on
// 127.0.0.1 (cpp-httplib), under the path /fhir/, so any FHIR client (or a study's
// fhir_base) can use it. Every request runs in the global session: writes persist for the
// life of the process.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fhir/fhir_server.h"
#include "util/status.h"

namespace nf {

class FhirHttpServer {
 public:
  /// Builds the record server. `base_url` is "http://127.0.0.1:PORT/fhir/".
  using Builder = std::function<Result<std::unique_ptr<FhirServer>>(const std::string& base_url)>;

  /// Binds 127.0.0.1:`port` (0 = any free port), builds the server with its base URL and
  /// serves GET and POST under /fhir/ in a background thread (GET /health answers "ok").
  /// Responses are application/fhir+json with the record server's status and, for 201,
  /// a Location header. Errors: Unavailable "cannot bind 127.0.0.1:PORT"; the builder's.
  static Result<std::unique_ptr<FhirHttpServer>> start(const Builder& build, int port = 0);
  ~FhirHttpServer();
  FhirHttpServer(const FhirHttpServer&) = delete;
  FhirHttpServer& operator=(const FhirHttpServer&) = delete;

  int port() const;
  /// "http://127.0.0.1:PORT/fhir/"
  std::string base_url() const;
  FhirServer& server();
  /// Stops serving and joins the thread; idempotent.
  void stop();

  struct Impl;
  explicit FhirHttpServer(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nf
