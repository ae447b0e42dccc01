// Room: which pages of the program's own executable are resident, by ELF
// section: what the footprint rows' file-backed difference is made of.
// No locks.

package benchfloor

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// ResidentCode is the resident part of this program's executable, in KiB,
// by ELF section. The kernel maps a file's pages in 64 KiB blocks around
// each page touched (fault-around), so a few functions run or looked up
// far apart cost a block each.
type ResidentCode struct {
	// Text is .text: the machine code that ran, or lies near code that ran.
	Text int
	// Pclntab is .gopclntab: the function table, names and stack maps the
	// runtime reads for the functions on a goroutine's stack whenever it
	// starts a goroutine, grows, shrinks or scans a stack, or preempts it.
	Pclntab int
	// Rodata is .rodata: constants and type data.
	Rodata int
	// Other is every other section of the executable (data, typelinks,
	// the ELF headers).
	Other int
}

// ResidentCodeKiB reads the resident pages of this program's executable
// (/proc/self/maps and the present bit of /proc/self/pagemap) and sums
// them by ELF section.
func ResidentCodeKiB() (ResidentCode, error) {
	var rc ResidentCode
	exe, err := os.Executable()
	if err != nil {
		return rc, err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return rc, err
	}
	defer f.Close()
	section := func(off uint64) *int {
		for _, s := range f.Sections {
			if s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_ALLOC == 0 || off < s.Offset || off >= s.Offset+s.Size {
				continue
			}
			switch s.Name {
			case ".text":
				return &rc.Text
			case ".gopclntab":
				return &rc.Pclntab
			case ".rodata":
				return &rc.Rodata
			}
		}
		return &rc.Other
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return rc, err
	}
	defer maps.Close()
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return rc, err
	}
	defer pagemap.Close()
	page := uint64(os.Getpagesize())
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		var start, end, off uint64
		if _, err := fmt.Sscanf(fields[0]+" "+fields[2], "%x-%x %x", &start, &end, &off); err != nil {
			return rc, fmt.Errorf("benchfloor: /proc/self/maps line %q: %w", sc.Text(), err)
		}
		entries := make([]byte, (end-start)/page*8)
		if _, err := pagemap.ReadAt(entries, int64(start/page*8)); err != nil {
			return rc, fmt.Errorf("benchfloor: reading /proc/self/pagemap: %w", err)
		}
		for i := uint64(0); i < (end-start)/page; i++ {
			if binary.LittleEndian.Uint64(entries[i*8:])&(1<<63) != 0 { // present
				*section(off + i*page) += int(page / 1024)
			}
		}
	}
	return rc, sc.Err()
}
