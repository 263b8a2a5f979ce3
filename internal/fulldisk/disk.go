package fulldisk

// Disk is a small file system mounted for one test.
type Disk struct {
	// Dir is where it is mounted.
	Dir    string
	filler string
}
