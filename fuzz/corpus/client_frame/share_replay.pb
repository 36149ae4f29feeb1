ú"
holdem:3:7:4294967297:12holdem