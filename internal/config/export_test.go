package config

// LowerTotalSize sets the loader's total cap to n bytes until the returned
// function restores MaxTotalSize.
func LowerTotalSize(n int) (restore func()) {
	maxTotalSize = n
	return func() { maxTotalSize = MaxTotalSize }
}

// TotalSize is the total cap the loader applies.
func TotalSize() int { return maxTotalSize }
