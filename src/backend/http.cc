#include "backend/http.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>

#include <curl/curl.h>
#include <fmt/format.h>

namespace nf {

namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct SlistDeleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

size_t write_body(char* ptr, size_t size, size_t nmemb, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * nmemb);
  return size * nmemb;
}

size_t write_header(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* reply = static_cast<HttpReply*>(userdata);
  const size_t n = size * nmemb;
  std::string line(ptr, n);
  if (line.rfind("HTTP/", 0) == 0) {
    reply->headers.clear();  // a new response (after 100-continue or a redirect)
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t b = colon + 1, e = line.size();
  while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
  while (e > b && (line[e - 1] == '\r' || line[e - 1] == '\n' || line[e - 1] == ' ')) --e;
  reply->headers[name] = line.substr(b, e - b);
  return n;
}

}  // namespace

CurlHandlePool::~CurlHandlePool() {
  for (auto& [id, h] : handles_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlHandlePool::for_this_thread() {
  global_init_once();
  std::lock_guard<std::mutex> lock(mu_);
  void*& h = handles_[std::this_thread::get_id()];
  if (h == nullptr) h = curl_easy_init();
  return h;
}

HttpReply http_post(CurlHandlePool& pool, const std::string& url, const std::vector<std::string>& headers, const std::string& payload,
                    double timeout_s, double connect_timeout_s) {
  HttpReply a;
  CURL* c = static_cast<CURL*>(pool.for_this_thread());
  if (c == nullptr) {
    a.transport_error = true;
    a.curl_error = "curl_easy_init failed";
    return a;
  }
  curl_slist* raw = nullptr;
  for (const auto& h : headers) raw = curl_slist_append(raw, h.c_str());
  std::unique_ptr<curl_slist, SlistDeleter> list(raw);
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, write_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  const auto t0 = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(c);
  a.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // The handle outlives this call: drop pointers to locals.
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, nullptr);
  if (rc != CURLE_OK) {
    a.transport_error = true;
    a.curl_error = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    a.http = 0;
    return a;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.http);
  return a;
}

std::string redact_secret(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(secret, pos)) != std::string::npos) {
    text.replace(pos, secret.size(), "[redacted]");
    pos += 10;
  }
  return text;
}

std::map<std::string, std::string> provenance_headers(const std::map<std::string, std::string>& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers) {
    if (name == "set-cookie" || name == "authorization" || name == "x-api-key") continue;
    const bool keep = name == "server" || name == "date" || name == "x-request-id" || name == "request-id" ||
                      name == "retry-after" || name.rfind("openai-", 0) == 0 || name.rfind("x-ratelimit-", 0) == 0 ||
                      name.rfind("anthropic-", 0) == 0 || name.find("model") != std::string::npos ||
                      name.find("fingerprint") != std::string::npos;
    if (keep) out[name] = value;
  }
  return out;
}

ChatResponse post_chat(const ChatEndpoint& ep, const std::string& payload, const ChatBodyParser& parse, Rng& rng,
                       int max_tokens) {
  Clock& clock = ep.clock ? *ep.clock : real_clock();
  HttpReply last;
  ChatResponse parsed;
  bool parsed_ok = false;
  auto attempt_fn = [&](int) {
    if (ep.limiter) ep.limiter->before_request();
    last = http_post(*ep.pool, ep.url, ep.headers, payload, ep.timeout_s, ep.connect_timeout_s);
    if (!last.transport_error && ep.health) ep.health->answered = true;
    AttemptResult a;
    a.transport_error = last.transport_error;
    a.http = last.http;
    if (auto it = last.headers.find("retry-after"); it != last.headers.end()) a.retry_after = it->second;
    if (auto it = last.headers.find("date"); it != last.headers.end()) a.date = it->second;
    parsed_ok = false;
    if (!a.transport_error && a.http >= 200 && a.http < 300) {
      parsed = ChatResponse();
      parsed_ok = parse(last.body, parsed);
      a.malformed_body = !parsed_ok;
    }
    return a;
  };
  auto on_wait = [&](const AttemptResult& a, double wait_s) {
    if (a.http == 429 && ep.limiter) ep.limiter->pause_for(wait_s);
  };
  int attempts = 0;
  RetryPolicy policy = ep.policy;
  if (ep.health && ep.health->fail_fast()) policy.max_retries = 0;
  const RetryDecision d = run_with_retries(policy, clock, rng, attempt_fn, &attempts, on_wait);
  if (ep.health) {
    if (last.transport_error && !ep.health->answered.load()) ep.health->dead_calls.fetch_add(1);
  }

  ChatResponse r = parsed_ok ? parsed : ChatResponse();
  r.attempts = attempts;
  r.latency_ms = last.latency_ms;
  r.http_status = static_cast<int>(last.http);
  r.raw_body = redact_secret(last.body, ep.secret);
  r.headers = provenance_headers(last.headers);
  for (auto& [name, value] : r.headers) value = redact_secret(value, ep.secret);
  const std::string tries = fmt::format(" ({} attempt{})", attempts, attempts == 1 ? "" : "s");
  if (ep.limiter && parsed_ok) {
    const double used = r.prompt_tokens >= 0 && r.completion_tokens >= 0
                            ? static_cast<double>(r.prompt_tokens + r.completion_tokens)
                            : static_cast<double>(max_tokens);
    ep.limiter->after_reply(used);
  }
  if (last.transport_error) {
    r.kind = ResponseKind::kApiError;
    r.error = redact_secret("connect: " + last.curl_error + tries, ep.secret);
    return r;
  }
  if (last.http < 200 || last.http >= 300) {
    r.kind = ResponseKind::kApiError;
    std::string head = r.raw_body.substr(0, 200);
    r.error = fmt::format("HTTP {}: {}{}", last.http, head, tries);
    if (d.action == RetryDecision::Action::kGiveUp && d.reason.find("cap") != std::string::npos)
      r.error = fmt::format("HTTP {}: {}{}", last.http, d.reason, tries);
    r.error = redact_secret(r.error, ep.secret);
    return r;
  }
  if (!parsed_ok) {
    r.kind = ResponseKind::kApiError;
    r.content.clear();
    r.error = "malformed response body" + tries;
    return r;
  }
  return r;
}

}  // namespace nf
