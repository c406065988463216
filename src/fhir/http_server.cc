#include "fhir/http_server.h"

#include <thread>

#include <fmt/format.h>
#include <httplib.h>

namespace nf {

struct FhirHttpServer::Impl {
  httplib::Server http;
  std::unique_ptr<FhirServer> fhir;
  std::thread thread;
  int port = 0;
  bool stopped = false;
};

FhirHttpServer::FhirHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FhirHttpServer::~FhirHttpServer() { stop(); }

int FhirHttpServer::port() const { return impl_->port; }
std::string FhirHttpServer::base_url() const { return fmt::format("http://127.0.0.1:{}/fhir/", impl_->port); }
FhirServer& FhirHttpServer::server() { return *impl_->fhir; }

void FhirHttpServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<FhirHttpServer>> FhirHttpServer::start(const Builder& build, int port) {
  auto impl = std::make_unique<Impl>();
  const int bound = port == 0 ? impl->http.bind_to_any_port("127.0.0.1") : (impl->http.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound <= 0) return Unavailable(fmt::format("cannot bind 127.0.0.1:{}", port));
  impl->port = bound;
  NF_ASSIGN_OR_RETURN(impl->fhir, build(fmt::format("http://127.0.0.1:{}/fhir/", bound)));
  FhirServer* fhir = impl->fhir.get();
  auto answer = [fhir](const std::string& method, const httplib::Request& req, httplib::Response& res) {
    std::string target = req.path.size() > 6 ? req.path.substr(6) : "";  // after "/fhir/"
    if (!req.params.empty()) {
      std::string q;
      for (const auto& [k, v] : req.params)
        q += (q.empty() ? "" : "&") + k + "=" + httplib::detail::encode_query_param(v);
      target += "?" + q;
    }
    FhirResponse r = fhir->handle({method, target, req.body}, "");
    res.status = r.status;
    if (!r.location.empty()) res.set_header("Location", r.location);
    res.set_content(r.body.dump(), "application/fhir+json");
  };
  impl->http.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  impl->http.Get(R"(/fhir/?.*)", [answer](const httplib::Request& req, httplib::Response& res) { answer("GET", req, res); });
  impl->http.Post(R"(/fhir/?.*)", [answer](const httplib::Request& req, httplib::Response& res) { answer("POST", req, res); });
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->http.listen_after_bind(); });
  return std::make_unique<FhirHttpServer>(std::move(impl));
}

}  // namespace nf
