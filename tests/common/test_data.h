// Test helpers: where the real data lives, temp dirs, running the CLI binary, and the
// FairMedAgent model-A draws converted to the long format at test time (never committed).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nf::testing {

/// $NOISEFLOOR_DATA (a relative value is taken relative to the repository root, where
/// the README's commands run), or ../shared/data beside the source tree.
inline std::string data_dir() {
  if (const char* d = std::getenv("NOISEFLOOR_DATA"); d != nullptr && *d) {
    std::filesystem::path p(d);
    if (p.is_relative()) p = std::filesystem::path(NF_SOURCE_DIR) / p;
    return p.lexically_normal().string();
  }
  return std::string(NF_SOURCE_DIR) + "/../shared/data";
}

/// Asserts (fails, not skips) that a real-data file exists and returns its path.
inline std::string data_file(const std::string& rel) {
  const std::string p = data_dir() + "/" + rel;
  EXPECT_TRUE(std::filesystem::exists(p)) << "real data missing: " << p << " (set NOISEFLOOR_DATA)";
  return p;
}

/// A fresh empty directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nftest-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes `text` to `path` (tests' own fixtures: studies, small datasets).
inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

/// "NOISEFLOOR_DATA=<data_dir()>", the environment prefix for run_cli.
inline std::string data_env() { return "NOISEFLOOR_DATA=" + data_dir(); }

struct CmdResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

/// Runs `NF_BINARY args...` through the shell with `env` prefixed (e.g. "FOO=1"),
/// capturing stdout and stderr into files under `dir`.
inline CmdResult run_cli(const std::string& args, const std::string& dir, const std::string& env = "") {
  const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  const std::string cmd = env + " " + NF_BINARY + " " + args + " >" + out + " 2>" + err + " </dev/null";
  const int st = std::system(cmd.c_str());
  CmdResult r;
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// The six binary outcomes of the floor study (data README), as long-format CSV text:
/// subject,item,cluster,condition,config,replicate,outcome,value
inline std::string fairmedagent_model_a_csv() {
  const auto actions = nlohmann::json::parse(slurp(data_file("fairmedagent-floor16/model_a_reference_actions.json")));
  const auto vig = nlohmann::json::parse(slurp(data_file("fairmedagent-floor16/vignettes.json")));
  std::vector<std::string> ids;
  for (const auto& v : vig["vignettes"]) ids.push_back(v["vignette_id"].get<std::string>());
  std::sort(ids.begin(), ids.end());  // floor_study_order: sorted by vignette_id
  std::ostringstream csv;
  csv << "subject,item,cluster,condition,config,replicate,outcome,value\n";
  for (const auto& [rep, fields] : actions.items()) {
    const int r = std::stoi(rep.substr(3));
    for (size_t i = 0; i < ids.size(); ++i) {
      auto emit = [&](const char* outcome, int value) {
        csv << "model_a," << ids[i] << "," << ids[i] << ",reference,default," << r << "," << outcome << ","
            << value << "\n";
      };
      emit("high_acuity", fields["esi"][i].get<int>() <= 2);
      emit("admit", fields["admit"][i].get<int>());
      emit("escalate_icu", fields["icu"][i].get<int>());
      emit("any_opioid", fields["tier"][i].get<int>() >= 2);
      emit("cs_caution", fields["cs"][i].get<int>());
      emit("referral", fields["ref"][i].get<int>());
    }
  }
  return csv.str();
}

}  // namespace nf::testing
