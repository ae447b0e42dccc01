package axdecode

// Known is known, as a slice.
func Known() []string { return known[:] }

// Intern is intern.
var Intern = intern
