// The config files a launch plan writes (launch_agents.h), and putting the agent's own files
// back afterwards. An agent's own file (launch_file::restore) is backed up to
// "<path>.superfluid-backup" before it is overwritten and moved back when the agent exits; a
// backup left by an interrupted launch is put back first, so the original is never lost to a
// second launch. Launch-owned files are written and left in place. On the launching thread.
#pragma once

#include "launch/launch_agents.h"

namespace sf::launch {

/** Where the agent's own file at `path` is kept during a launch. */
std::string backup_path(const std::string &path);

/**
 * Writes the plan's files (creating their folders), backing up the agent's own first. False
 * after printing why to stderr when a file cannot be backed up or written.
 */
bool write_files(const launch_plan &p);

/**
 * Puts back the agent's own files of `p`: the backup where there is one, else the file is
 * removed (it did not exist before the launch). Launch-owned files stay.
 */
void restore_files(const launch_plan &p);

}  // namespace sf::launch
