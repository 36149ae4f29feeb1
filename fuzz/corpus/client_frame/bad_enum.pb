Z
	abcd