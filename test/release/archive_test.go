package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// readArchive returns the regular files of a .tar.gz or .zip by name.
func readArchive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		z, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		for _, f := range z.File {
			if f.FileInfo().IsDir() {
				continue
			}
			r, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			files[f.Name] = data
		}
		return files
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	gz, err := gzip.NewReader(file)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		files[h.Name] = data
	}
}

// checkExecutable says whether data is an executable of the object format
// and machine that goos and goarch run.
func checkExecutable(data []byte, goos, goarch string) error {
	r := bytes.NewReader(data)
	var machine string
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		machine = map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return err
		}
		machine = map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return err
		}
		machine = map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	default:
		return fmt.Errorf("no check for %s", goos)
	}
	if machine != goarch {
		return fmt.Errorf("built for %q, want %s", machine, goarch)
	}
	return nil
}
