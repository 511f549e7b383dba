"""What every feature stands on: who the caller is (auth, tokens), projects and members, the audit
trail, quotas, the disk's free space, background threads and the demo project."""
