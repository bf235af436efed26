#include "base/paths.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// The variables paths.cc reads. Each test starts with none of them set
// (`bazel test` may pass CHAINTAG_CORPORA through) and the fixture puts
// back what the process had.
class PathsTest : public testing::Test {
 protected:
  static constexpr const char* kVariables[] = {"BUILD_WORKING_DIRECTORY",
                                               "BUILD_WORKSPACE_DIRECTORY",
                                               "CHAINTAG_CORPORA"};

  void SetUp() override {
    for (int v = 0; v < kCount; ++v) {
      const char* value = std::getenv(kVariables[v]);
      if (value != nullptr) saved_[v] = value;
      ASSERT_EQ(unsetenv(kVariables[v]), 0);
    }
  }
  void TearDown() override {
    for (int v = 0; v < kCount; ++v) {
      if (saved_[v].has_value()) {
        setenv(kVariables[v], saved_[v]->c_str(), 1);
      } else {
        unsetenv(kVariables[v]);
      }
    }
  }
  static void Set(const char* name, const char* value) {
    ASSERT_EQ(setenv(name, value, 1), 0);
  }

 private:
  static constexpr int kCount = 3;
  std::optional<std::string> saved_[kCount];
};

TEST_F(PathsTest, ResolvePathJoinsRelativePathsOnly) {
  EXPECT_EQ(ResolvePath("/home/ann/work", "data/train.txt"),
            "/home/ann/work/data/train.txt");
  EXPECT_EQ(ResolvePath("out", "model.bin"), "out/model.bin");
  EXPECT_EQ(ResolvePath("/home/ann/work", "../data/x"),
            "/home/ann/work/../data/x");
  // Absolute paths are kept.
  EXPECT_EQ(ResolvePath("/home/ann/work", "/data/train.txt"),
            "/data/train.txt");
  // No base: the path as given.
  EXPECT_EQ(ResolvePath("", "data/train.txt"), "data/train.txt");
  EXPECT_EQ(ResolvePath("", "/data/train.txt"), "/data/train.txt");
  // An empty (unset) path stays empty rather than becoming the base.
  EXPECT_EQ(ResolvePath("/home/ann/work", ""), "");
  EXPECT_EQ(ResolvePath("", ""), "");
}

TEST_F(PathsTest, CallerDirectoryIsBuildWorkingDirectoryOrDot) {
  EXPECT_EQ(CallerDirectory(), ".");
  Set("BUILD_WORKING_DIRECTORY", "");
  EXPECT_EQ(CallerDirectory(), ".");
  Set("BUILD_WORKING_DIRECTORY", "/home/ann/work");
  EXPECT_EQ(CallerDirectory(), "/home/ann/work");
  // The workspace is not the caller's directory.
  Set("BUILD_WORKSPACE_DIRECTORY", "/home/ann/chaintag");
  EXPECT_EQ(CallerDirectory(), "/home/ann/work");
}

TEST_F(PathsTest, ResolveUserPathUsesTheCallersDirectory) {
  // Outside `bazel run`: relative to the current directory.
  EXPECT_EQ(ResolveUserPath("model.bin"), "./model.bin");
  EXPECT_EQ(ResolveUserPath("/tmp/model.bin"), "/tmp/model.bin");
  EXPECT_EQ(ResolveUserPath(""), "");

  Set("BUILD_WORKING_DIRECTORY", "/home/ann/work");
  Set("BUILD_WORKSPACE_DIRECTORY", "/home/ann/chaintag");
  EXPECT_EQ(ResolveUserPath("model.bin"), "/home/ann/work/model.bin");
  EXPECT_EQ(ResolveUserPath("runs/a/model.bin"),
            "/home/ann/work/runs/a/model.bin");
  EXPECT_EQ(ResolveUserPath("/tmp/model.bin"), "/tmp/model.bin");
  EXPECT_EQ(ResolveUserPath(""), "");
}

TEST_F(PathsTest, CorporaRootOutsideBazelRunIsBesideTheCurrentDirectory) {
  EXPECT_EQ(DefaultCorporaRoot(), "./../shared/corpora");
  // Empty variables count as unset.
  Set("CHAINTAG_CORPORA", "");
  Set("BUILD_WORKSPACE_DIRECTORY", "");
  Set("BUILD_WORKING_DIRECTORY", "");
  EXPECT_EQ(DefaultCorporaRoot(), "./../shared/corpora");
}

TEST_F(PathsTest, CorporaRootUnderBazelRunIsBesideTheWorkspace) {
  Set("BUILD_WORKSPACE_DIRECTORY", "/home/ann/chaintag");
  Set("BUILD_WORKING_DIRECTORY", "/home/ann/work");
  EXPECT_EQ(DefaultCorporaRoot(), "/home/ann/chaintag/../shared/corpora");
}

TEST_F(PathsTest, CorporaRootWithoutWorkspaceIsBesideTheCaller) {
  Set("BUILD_WORKING_DIRECTORY", "/home/ann/work");
  EXPECT_EQ(DefaultCorporaRoot(), "/home/ann/work/../shared/corpora");
}

TEST_F(PathsTest, CorporaVariableWinsOverTheDefaults) {
  Set("CHAINTAG_CORPORA", "/data/corpora");
  EXPECT_EQ(DefaultCorporaRoot(), "/data/corpora");
  Set("BUILD_WORKSPACE_DIRECTORY", "/home/ann/chaintag");
  Set("BUILD_WORKING_DIRECTORY", "/home/ann/work");
  EXPECT_EQ(DefaultCorporaRoot(), "/data/corpora");
}

}  // namespace
}  // namespace chaintag
