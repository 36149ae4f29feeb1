Zdoudizhu
