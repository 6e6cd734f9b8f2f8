// Writing a launch plan's files and putting the agent's own back (launch/launch_files.h).
#include <gtest/gtest.h>

#include <filesystem>

#include "launch/launch_files.h"
#include "temp_dir.h"

using namespace sf::launch;
using sf::test::temp_dir;
namespace fs = std::filesystem;

TEST(LaunchFiles, LaunchOwnedFilesAreWrittenAndStay) {
    temp_dir dir;
    launch_plan p;
    const std::string f = dir.path + "/state/launch/hermes/config.yaml";  // folders made
    p.files             = {{f, "ours\n", false}};
    ASSERT_TRUE(write_files(p));
    EXPECT_EQ(temp_dir::read(f), "ours\n");
    EXPECT_FALSE(fs::exists(backup_path(f)));
    restore_files(p);
    EXPECT_EQ(temp_dir::read(f), "ours\n");
}

TEST(LaunchFiles, TheAgentsOwnFileIsBackedUpAndPutBack) {
    temp_dir dir;
    const std::string f = dir.path + "/home/.pi/agent/models.json";
    dir.write(f, "the user's\n");
    launch_plan p;
    p.files = {{f, "ours\n", true}};
    ASSERT_TRUE(write_files(p));
    EXPECT_EQ(temp_dir::read(f), "ours\n");  // what the agent reads while it runs
    EXPECT_EQ(temp_dir::read(backup_path(f)), "the user's\n");
    restore_files(p);
    EXPECT_EQ(temp_dir::read(f), "the user's\n");
    EXPECT_FALSE(fs::exists(backup_path(f)));
}

TEST(LaunchFiles, AnOwnFileThatDidNotExistIsRemovedAfterwards) {
    temp_dir dir;
    const std::string f = dir.path + "/home/.cline/data/secrets.json";
    launch_plan p;
    p.files = {{f, "ours\n", true}};
    ASSERT_TRUE(write_files(p));
    EXPECT_EQ(temp_dir::read(f), "ours\n");
    restore_files(p);
    EXPECT_FALSE(fs::exists(f));
    EXPECT_FALSE(fs::exists(backup_path(f)));
}

// A launch killed before it restored leaves our file and the user's backup; the next launch
// must keep the user's file as the backup, not back up ours over it.
TEST(LaunchFiles, ABackupLeftByAnInterruptedLaunchIsNotLost) {
    temp_dir dir;
    const std::string f = dir.path + "/home/.pi/agent/models.json";
    dir.write(f, "left by the killed launch\n");
    dir.write(backup_path(f), "the user's\n");
    launch_plan p;
    p.files = {{f, "ours\n", true}};
    ASSERT_TRUE(write_files(p));
    EXPECT_EQ(temp_dir::read(f), "ours\n");
    EXPECT_EQ(temp_dir::read(backup_path(f)), "the user's\n");
    restore_files(p);
    EXPECT_EQ(temp_dir::read(f), "the user's\n");
}

TEST(LaunchFiles, AFileThatCannotBeWrittenFailsTheLaunch) {
    temp_dir dir;
    dir.write(dir.path + "/blocker", "a file where a folder should be\n");
    launch_plan p;
    p.files = {{dir.path + "/blocker/config.json", "ours\n", false}};
    EXPECT_FALSE(write_files(p));
}
