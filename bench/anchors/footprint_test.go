package anchors_test

import "fmt"

func runFootprint(side string) int { fmt.Println("error: not yet", side); return 1 }
