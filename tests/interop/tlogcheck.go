// tlogcheck: Go's reference implementation (golang.org/x/mod/sumdb/tlog and sumdb/note, as the Go checksum
// database uses them) asked about what riskapi publishes; tests/history/test_interop_go.py runs it.
//
//	tlogcheck tree DIR SIZE ROOT [I...]  the tree of SIZE leaves and root hash ROOT (base64) whose tiles
//	                           (C2SP tlog-tiles: L/N[.p/W] with the ".tile" extension riskapi stores them
//	                           with) are under DIR: tlog reads them, checking each against ROOT, and prints
//	                           JSON with the root it computes and, for leaf I (every leaf by default), its
//	                           hash, its inclusion proof and the consistency proof from the tree of I+1
//	                           leaves (none for the last), all from the tiles alone
//	tlogcheck leaf             reads one leaf's data on stdin and prints tlog.RecordHash of it, base64
//	tlogcheck note VKEY        reads a signed note on stdin; prints its text if VKEY's signature verifies,
//	                           else exits 1 with note's error
//	tlogcheck sign             reads a private key (Go's PRIVATE+KEY+… form) and a note's text on stdin,
//	                           separated by a blank line; prints the note signed with it
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type dirTiles struct{ dir string }

// Height: C2SP tlog-tiles' tiles are 8 levels high (256 hashes), as sumdb's are.
func (d dirTiles) Height() int { return 8 }

func (d dirTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		// sumdb's path is tile/H/L/N[.p/W]; tlog-tiles' has no H
		path := strings.TrimPrefix(t.Path(), "tile/8/")
		data, err := os.ReadFile(filepath.Join(d.dir, path+".tile"))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (d dirTiles) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func b64s(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = b64(h)
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func tree(dir string, size int64, stated string, indexes []int64) {
	var given tlog.Hash
	decoded, err := base64.StdEncoding.DecodeString(stated)
	if err != nil || len(decoded) != len(given) {
		fail(fmt.Errorf("not a base64 hash: %q", stated))
	}
	copy(given[:], decoded)
	// the tile reader checks every tile it reads against the tree it is given ("downloaded inconsistent tile")
	checked := tlog.TileHashReader(tlog.Tree{N: size, Hash: given}, dirTiles{dir})
	root, err := tlog.TreeHash(size, checked)
	if err != nil {
		fail(err)
	}
	leaves, proofs, consistency := []string{}, [][]string{}, [][]string{}
	for _, i := range indexes {
		hashes, err := checked.ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
		if err != nil {
			fail(err)
		}
		proof, err := tlog.ProveRecord(size, i, checked)
		if err != nil {
			fail(err)
		}
		if err := tlog.CheckRecord(proof, size, root, i, hashes[0]); err != nil {
			fail(err)
		}
		leaves = append(leaves, b64(hashes[0]))
		proofs = append(proofs, b64s(proof))
		older := i + 1
		if older < size {
			tp, err := tlog.ProveTree(size, older, checked)
			if err != nil {
				fail(err)
			}
			consistency = append(consistency, b64s(tp))
		}
	}
	out, _ := json.Marshal(map[string]any{"root": b64(root), "leaves": leaves, "inclusion": proofs,
		"consistency": consistency})
	fmt.Println(string(out))
}

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: tlogcheck tree DIR SIZE ROOT [I...] | leaf | note VKEY"))
	}
	switch os.Args[1] {
	case "tree":
		size, err := strconv.ParseInt(os.Args[3], 10, 64)
		if err != nil {
			fail(err)
		}
		indexes := []int64{}
		for _, arg := range os.Args[5:] {
			i, err := strconv.ParseInt(arg, 10, 64)
			if err != nil {
				fail(err)
			}
			indexes = append(indexes, i)
		}
		if len(indexes) == 0 {
			for i := int64(0); i < size; i++ {
				indexes = append(indexes, i)
			}
		}
		tree(os.Args[2], size, os.Args[4], indexes)
	case "leaf":
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(err)
		}
		fmt.Println(b64(tlog.RecordHash(data)))
	case "note":
		verifier, err := note.NewVerifier(os.Args[2])
		if err != nil {
			fail(err)
		}
		msg, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(err)
		}
		n, err := note.Open(msg, note.VerifierList(verifier))
		if err != nil {
			fail(err)
		}
		fmt.Print(n.Text)
	case "sign":
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(err)
		}
		parts := strings.SplitN(string(data), "\n\n", 2)
		if len(parts) != 2 {
			fail(fmt.Errorf("a key, a blank line, then the text"))
		}
		signer, err := note.NewSigner(strings.TrimSpace(parts[0]))
		if err != nil {
			fail(err)
		}
		signed, err := note.Sign(&note.Note{Text: parts[1]}, signer)
		if err != nil {
			fail(err)
		}
		os.Stdout.Write(signed)
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}
