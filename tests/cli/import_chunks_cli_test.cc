// Schema v4 through the real binary (issue 14): `noisefloor import draws` stores the
// outcomes as columnar chunks; `analyze` and `export` of that store must equal those of
// the same draws stored as rows (written here by read_long_draws + import_long_draws,
// which uses put_draws). On the FairMedAgent model-A reference draws and on a synthetic
// file with several outcomes, labels, missing clusters and a draw's rows far apart.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "data/draws_import.h"
#include "runner/import.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

// results.json without what names the store file or the moment of the run.
nlohmann::json results_without_paths(const std::string& dir) {
  nlohmann::json j = nlohmann::json::parse(slurp(dir + "/results.json"));
  nlohmann::json flat = j.flatten();
  for (auto it = flat.begin(); it != flat.end();) {
    const std::string& k = it.key();
    if (k.find("store") != std::string::npos || k.find("created") != std::string::npos ||
        k.find("elapsed") != std::string::npos || k.find("time") != std::string::npos)
      it = flat.erase(it);
    else
      ++it;
  }
  return flat;
}

void expect_chunked_store_analyzes_and_exports_as_rows(TempDir& d, const std::string& csv) {
  // Row form: the in-memory import (put_draws).
  {
    auto rows = read_long_draws(d / csv);
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    auto s = Store::open(d / "rows.sqlite");
    ASSERT_TRUE(s.ok());
    auto sum = import_long_draws(*rows, **s, "imported");
    ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  }
  CmdResult imp = run_cli("import draws " + d / csv + " --store " + d / "chunks.sqlite", d.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  for (const char* store : {"rows", "chunks"}) {
    CmdResult an = run_cli(std::string("analyze --store ") + d / (std::string(store) + ".sqlite") + " --out " +
                               d / (std::string("out-") + store) + " --resamples 400",
                           d.path());
    ASSERT_EQ(an.exit_code, 0) << an.err;
    for (const char* format : {"csv", "jsonl"}) {
      CmdResult ex = run_cli(std::string("export --store ") + d / (std::string(store) + ".sqlite") + " --format " +
                                 format + " --out " + d / (std::string(store) + "." + format),
                             d.path());
      ASSERT_EQ(ex.exit_code, 0) << ex.err;
    }
  }
  const nlohmann::json a = results_without_paths(d / "out-rows"), b = results_without_paths(d / "out-chunks");
  EXPECT_GT(a.size(), 20u);
  EXPECT_EQ(a, b) << nlohmann::json::diff(a, b).dump(1);
  EXPECT_EQ(slurp(d / "rows.csv"), slurp(d / "chunks.csv"));
  // JSONL: equal but for created_at (the second each draw was written).
  auto without_created = [](const std::string& text) {
    std::string out;
    size_t at = 0;
    while (at < text.size()) {
      const size_t end = text.find('\n', at);
      nlohmann::json j = nlohmann::json::parse(text.substr(at, end - at));
      j.erase("created_at");
      out += j.dump() + "\n";
      at = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
  };
  const std::string ja = slurp(d / "rows.jsonl"), jb = slurp(d / "chunks.jsonl");
  EXPECT_FALSE(ja.empty());
  EXPECT_EQ(without_created(ja), without_created(jb));
}

TEST(ImportChunksCli, FairMedAgentModelAAnalyzesAndExportsAsRows) {
  TempDir d;
  testing::write_text(d / "model_a.csv", testing::fairmedagent_model_a_csv());
  expect_chunked_store_analyzes_and_exports_as_rows(d, "model_a.csv");
}

TEST(ImportChunksCli, SyntheticManyChunksAnalyzesAndExportsAsRows) {
  TempDir d;
  // 2 subjects x 2 conditions x 120 items x 4 replicates x 3 outcomes (5,760 values: two
  // chunks); every item's cluster but one in 12; `choice` a labelled category; the
  // `late` outcome of every 50th draw comes at the end of the file.
  std::string text = "subject,item,cluster,condition,config,replicate,outcome,value,label\n", late;
  int k = 0;
  for (const char* subject : {"m2", "m1"})
    for (const char* condition : {"swap", "none"})
      for (int item = 0; item < 120; ++item)
        for (int r = 0; r < 4; ++r, ++k) {
          const std::string key = std::string(subject) + ",q" + std::to_string(item) + "," +
                                  (item % 10 == 0 ? "" : "c" + std::to_string(item % 12)) + "," + condition +
                                  ",default," + std::to_string(r);
          text += key + ",correct," + std::to_string((k * 7 + item) % 3 == 0 ? 1 : 0) + ",\n";
          text += key + ",choice," + std::string(1, static_cast<char>('A' + (k * 5 + item) % 3)) + ",\n";
          (k % 50 == 0 ? late : text) += key + ",late," + std::to_string((k + item) % 2) + ",\n";
        }
  testing::write_text(d / "s.csv", text + late);
  expect_chunked_store_analyzes_and_exports_as_rows(d, "s.csv");
}

}  // namespace
}  // namespace nf
