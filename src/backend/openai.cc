#include "backend/openai.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include <curl/curl.h>

namespace nf {

namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t write_body(char* ptr, size_t size, size_t nmemb, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * nmemb);
  return size * nmemb;
}

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(secret, pos)) != std::string::npos) {
    text.replace(pos, secret.size(), "[redacted]");
    pos += 10;
  }
  return text;
}

struct Attempt {
  bool transport_error = false;
  std::string curl_error;
  long http = 0;
  std::string body;
  double latency_ms = 0.0;
};

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

Attempt perform(const std::string& url, const std::string& payload, const OpenAiOptions& o) {
  Attempt a;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    a.transport_error = true;
    a.curl_error = "curl_easy_init failed";
    return a;
  }
  curl_slist* raw = nullptr;
  raw = curl_slist_append(raw, "Content-Type: application/json");
  raw = curl_slist_append(raw, "Expect:");
  if (!o.api_key.empty()) raw = curl_slist_append(raw, ("Authorization: Bearer " + o.api_key).c_str());
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw);

  char errbuf[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // ignore *_proxy env vars: talk to base_url directly
  const auto t0 = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(c);
  a.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (rc != CURLE_OK) {
    a.transport_error = true;
    a.curl_error = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    return a;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.http);
  return a;
}

bool retryable(const Attempt& a) {
  if (a.transport_error) return true;
  return a.http == 408 || a.http == 429 || a.http >= 500;
}

// Fills `r` from a 2xx body; false if the body is malformed.
bool parse_body(const std::string& body, ChatResponse& r) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return false;
  const auto& c0 = (*choices)[0];
  if (!c0.is_object()) return false;
  const auto msg = c0.find("message");
  if (msg == c0.end() || !msg->is_object()) return false;
  const auto content = msg->find("content");
  if (content != msg->end() && content->is_string()) {
    r.content = content->get<std::string>();
  } else if (content != msg->end() && !content->is_null()) {
    return false;
  }
  const auto fr = c0.find("finish_reason");
  if (fr != c0.end() && fr->is_string()) r.finish_reason = fr->get<std::string>();
  if (auto m = j.find("model"); m != j.end() && m->is_string()) r.served_model = m->get<std::string>();
  if (auto f = j.find("system_fingerprint"); f != j.end() && f->is_string()) {
    r.system_fingerprint = f->get<std::string>();
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) {
      r.prompt_tokens = p->get<int64_t>();
    }
    if (auto p = u->find("completion_tokens"); p != u->end() && p->is_number_integer()) {
      r.completion_tokens = p->get<int64_t>();
    }
  }
  return true;
}

}  // namespace

std::string strip_url_userinfo(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  if (end == std::string::npos) end = url.size();
  const size_t at = url.rfind('@', end - 1);
  if (at == std::string::npos || at < start || end == start) return url;
  return url.substr(0, start) + url.substr(at + 1);
}

OpenAiBackend::OpenAiBackend(OpenAiOptions options) : options_(std::move(options)) {
  base_url_ = options_.base_url;
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  global_init_once();
}

std::string OpenAiBackend::identity() const { return "openai:" + strip_url_userinfo(base_url_); }

ChatResponse OpenAiBackend::complete(const ChatRequest& request) {
  const std::string url = base_url_ + "/chat/completions";
  const std::string payload =
      request.to_openai_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  static constexpr int kBackoffMs[] = {100, 400};
  const int max_attempts = 1 + std::max(0, options_.max_retries);
  ChatResponse r;
  Attempt a;
  int attempt = 0;
  for (;;) {
    ++attempt;
    a = perform(url, payload, options_);
    if (attempt >= max_attempts || !retryable(a)) break;
    const int wait = kBackoffMs[std::min(attempt - 1, 1)];
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
  }
  r.attempts = attempt;
  r.latency_ms = a.latency_ms;
  r.http_status = static_cast<int>(a.http);
  r.raw_body = a.body;
  if (a.transport_error) {
    r.kind = ResponseKind::kApiError;
    r.error = redact("connect: " + a.curl_error, options_.api_key);
    return r;
  }
  if (a.http < 200 || a.http >= 300) {
    r.kind = ResponseKind::kApiError;
    r.error = redact("HTTP " + std::to_string(a.http) + ": " + redact(a.body, options_.api_key).substr(0, 200),
                     options_.api_key);
    return r;
  }
  if (!parse_body(a.body, r)) {
    r.kind = ResponseKind::kApiError;
    r.content.clear();
    r.error = "malformed response body";
    return r;
  }
  if (r.finish_reason == "content_filter") {
    r.kind = ResponseKind::kRefused;
    r.error = "content_filter";
    return r;
  }
  r.kind = ResponseKind::kOk;
  return r;
}

}  // namespace nf
