// libcurl and libpq loaded on first use, not at start-up (issue 14).
//
// The noisefloor executable defines the few libcurl and libpq functions the library calls
// (src/backend/http.cc, src/store/pg_store.cc) as forwarders that dlopen the real library
// the first time one of them is called. The executable is linked --as-needed, so it no
// longer lists libcurl and libpq (and through them 26 more libraries: GnuTLS, Kerberos,
// LDAP, SSH, ...) as needed at start-up: `import draws` and `analyze` never call them and
// so never load them. Start-up CPU measured on the 2-core shared box (perf stat, 40 runs
// each, a program linking the same libraries): 37 ms with all 46 libraries, 20-24 ms
// without those 28 (bench/README.md, "Start-up"). A command that makes an HTTP call or
// opens a PostgreSQL store loads the library then (the same one the executable was linked
// against: the soname below), once.
//
// Only the noisefloor executable uses these forwarders (they are in src/cli); the test
// programs link libcurl and libpq as before. If a library cannot be loaded the program
// ends with a message naming it and exit code 4 (as a missing library at start-up would
// have stopped it before).
#define CURL_DISABLE_TYPECHECK  // the plain declarations of curl_easy_setopt / getinfo
#include <curl/curl.h>
#include <dlfcn.h>
#include <postgresql/libpq-fe.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "util/exit_code.h"

namespace {

/// The library `soname`, loaded on the first call (thread-safe); exits with code 4 and a
/// message if it cannot be loaded.
void* load(const char* soname) {
  void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr, "noisefloor: cannot load %s: %s\n", soname, why != nullptr ? why : "unknown error");
    std::exit(static_cast<int>(nf::ExitCode::kInternal));
  }
  return h;
}

void* curl_lib() {
  static void* const h = load("libcurl.so.4");
  return h;
}

void* pq_lib() {
  static void* const h = load("libpq.so.5");
  return h;
}

/// The function `name` of library `lib`, as a pointer of type F; exits as load() if absent.
template <class F>
F symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr, "noisefloor: %s: %s\n", name, why != nullptr ? why : "symbol not found");
    std::exit(static_cast<int>(nf::ExitCode::kInternal));
  }
  return reinterpret_cast<F>(p);
}

}  // namespace

// The real function, looked up once per process (a function-local static: thread-safe).
#define NF_REAL(lib, name) static const auto real = symbol<decltype(&::name)>(lib(), #name)

extern "C" {

// ---- libcurl (src/backend/http.cc) ----

CURLcode curl_global_init(long flags) {
  NF_REAL(curl_lib, curl_global_init);
  return real(flags);
}
CURL* curl_easy_init(void) {
  NF_REAL(curl_lib, curl_easy_init);
  return real();
}
// curl_easy_setopt and curl_easy_getinfo take one argument after the option: a long, a
// pointer (data or function) or a curl_off_t, each passed in one 64-bit integer register
// (x86-64 and AArch64 calling conventions), so it is forwarded as a pointer-sized value.
CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  NF_REAL(curl_lib, curl_easy_setopt);
  va_list ap;
  va_start(ap, option);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return real(curl, option, arg);
}
CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  NF_REAL(curl_lib, curl_easy_getinfo);
  va_list ap;
  va_start(ap, info);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return real(curl, info, arg);
}
CURLcode curl_easy_perform(CURL* curl) {
  NF_REAL(curl_lib, curl_easy_perform);
  return real(curl);
}
void curl_easy_cleanup(CURL* curl) {
  NF_REAL(curl_lib, curl_easy_cleanup);
  real(curl);
}
const char* curl_easy_strerror(CURLcode code) {
  NF_REAL(curl_lib, curl_easy_strerror);
  return real(code);
}
struct curl_slist* curl_slist_append(struct curl_slist* list, const char* s) {
  NF_REAL(curl_lib, curl_slist_append);
  return real(list, s);
}
void curl_slist_free_all(struct curl_slist* list) {
  NF_REAL(curl_lib, curl_slist_free_all);
  real(list);
}
time_t curl_getdate(const char* p, const time_t* unused) {
  NF_REAL(curl_lib, curl_getdate);
  return real(p, unused);
}
CURLM* curl_multi_init(void) {
  NF_REAL(curl_lib, curl_multi_init);
  return real();
}
CURLMcode curl_multi_add_handle(CURLM* multi, CURL* curl) {
  NF_REAL(curl_lib, curl_multi_add_handle);
  return real(multi, curl);
}
CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* curl) {
  NF_REAL(curl_lib, curl_multi_remove_handle);
  return real(multi, curl);
}
CURLMcode curl_multi_perform(CURLM* multi, int* running) {
  NF_REAL(curl_lib, curl_multi_perform);
  return real(multi, running);
}
CURLMcode curl_multi_poll(CURLM* multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms,
                          int* ret) {
  NF_REAL(curl_lib, curl_multi_poll);
  return real(multi, extra_fds, extra_nfds, timeout_ms, ret);
}
CURLMsg* curl_multi_info_read(CURLM* multi, int* msgs_in_queue) {
  NF_REAL(curl_lib, curl_multi_info_read);
  return real(multi, msgs_in_queue);
}
CURLMcode curl_multi_cleanup(CURLM* multi) {
  NF_REAL(curl_lib, curl_multi_cleanup);
  return real(multi);
}

// ---- libpq (src/store/pg_store.cc) ----

PGconn* PQconnectdb(const char* conninfo) {
  NF_REAL(pq_lib, PQconnectdb);
  return real(conninfo);
}
ConnStatusType PQstatus(const PGconn* conn) {
  NF_REAL(pq_lib, PQstatus);
  return real(conn);
}
char* PQerrorMessage(const PGconn* conn) {
  NF_REAL(pq_lib, PQerrorMessage);
  return real(conn);
}
void PQfinish(PGconn* conn) {
  NF_REAL(pq_lib, PQfinish);
  real(conn);
}
PGresult* PQexec(PGconn* conn, const char* query) {
  NF_REAL(pq_lib, PQexec);
  return real(conn, query);
}
PGresult* PQexecParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                       const char* const* paramValues, const int* paramLengths, const int* paramFormats,
                       int resultFormat) {
  NF_REAL(pq_lib, PQexecParams);
  return real(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}
PGresult* PQgetResult(PGconn* conn) {
  NF_REAL(pq_lib, PQgetResult);
  return real(conn);
}
int PQputCopyData(PGconn* conn, const char* buffer, int nbytes) {
  NF_REAL(pq_lib, PQputCopyData);
  return real(conn, buffer, nbytes);
}
int PQputCopyEnd(PGconn* conn, const char* errormsg) {
  NF_REAL(pq_lib, PQputCopyEnd);
  return real(conn, errormsg);
}
ExecStatusType PQresultStatus(const PGresult* res) {
  NF_REAL(pq_lib, PQresultStatus);
  return real(res);
}
char* PQresultErrorMessage(const PGresult* res) {
  NF_REAL(pq_lib, PQresultErrorMessage);
  return real(res);
}
char* PQresultErrorField(const PGresult* res, int fieldcode) {
  NF_REAL(pq_lib, PQresultErrorField);
  return real(res, fieldcode);
}
int PQntuples(const PGresult* res) {
  NF_REAL(pq_lib, PQntuples);
  return real(res);
}
char* PQgetvalue(const PGresult* res, int tup_num, int field_num) {
  NF_REAL(pq_lib, PQgetvalue);
  return real(res, tup_num, field_num);
}
int PQgetlength(const PGresult* res, int tup_num, int field_num) {
  NF_REAL(pq_lib, PQgetlength);
  return real(res, tup_num, field_num);
}
int PQgetisnull(const PGresult* res, int tup_num, int field_num) {
  NF_REAL(pq_lib, PQgetisnull);
  return real(res, tup_num, field_num);
}
void PQclear(PGresult* res) {
  NF_REAL(pq_lib, PQclear);
  real(res);
}

}  // extern "C"
