// Imported first by a test file that runs on the `ps` path: the path is chosen once, when the job's modules load, and
// owner threads, host programs and the reaper inherit the variable. Its name is written here, not imported, because
// importing it would load the module that reads it; `processJobSuite`'s first test proves the two names agree.
process.env.MCPW_PROCESS_SCAN = "posix"
