// Study files for task fhir_agent (seed 002; docs/fhir-rerun.md): the kind's format,
// task_options keys, the default analysis rerun, and the shipped example.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/test_data.h"
#include "spec/study.h"

namespace nf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FhirStudyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nf-fhir-study-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "tasks.json") << "[]";
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<Study> parse(const std::string& body) {
    return parse_study("name: f\ntask: fhir_agent\ndataset: {format: medagentbench, path: tasks.json}\n"
                       "subjects: [{name: s, model: m}]\n" + body,
                       (dir_ / "study.yaml").string());
  }
  fs::path dir_;
};

TEST_F(FhirStudyTest, DefaultsAndOptions) {
  auto st = parse("task_options: {feedback: record, per_family: 10, families: [task9]}\n");
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->conditions, std::vector<std::string>{"none"});
  ASSERT_EQ(st->analyses.size(), 1u);
  EXPECT_EQ(st->analyses[0].name, "rerun");
  EXPECT_EQ(st->task_options["feedback"], "record");
  EXPECT_EQ(st->task_options["per_family"], 10);
  EXPECT_EQ(st->task_options["families"][0], "task9");
}

TEST_F(FhirStudyTest, BadKeysNameTheLine) {
  auto bad = parse("task_options: {feedbak: record}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(":5: task_options"));
  EXPECT_THAT(bad.status().message(), HasSubstr("feedbak"));
  auto cond = parse("conditions: [shuffle]\n");
  ASSERT_FALSE(cond.ok());
  EXPECT_THAT(cond.status().message(), HasSubstr("unknown condition 'shuffle'"));
  auto fmt = parse_study("name: f\ntask: fhir_agent\ndataset: {path: tasks.json}\nsubjects: [{name: s, model: m}]\n",
                         (dir_ / "study.yaml").string());
  ASSERT_FALSE(fmt.ok());
  EXPECT_THAT(fmt.status().message(), HasSubstr("format 'medqa' does not fit task 'fhir_agent'"));
  auto opt = parse("analyses: {rerun: {armz: []}}\n");
  ASSERT_FALSE(opt.ok());
  EXPECT_THAT(opt.status().message(), HasSubstr("armz"));
}

TEST_F(FhirStudyTest, ShippedExampleLoads) {
  ::setenv("NOISEFLOOR_DATA", testing::data_dir().c_str(), 1);
  auto st = load_study(NF_SOURCE_DIR + "/examples/medagentbench-rerun.yaml");
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->task, "fhir_agent");
  EXPECT_EQ(st->replicates, 5);
  EXPECT_EQ(st->task_options["per_family"], 10);
}

}  // namespace
}  // namespace nf
