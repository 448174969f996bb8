package owned

import (
	"fmt"
	"regexp"
	"strings"
)

// Script is what /bin/sh -c runs for a --target-cmd command line, and the
// server's program (the word exec runs; "" when the line is a list, whose
// other commands may be the one not found), for "command not found". The
// server's own command is run with exec, so that the process lobbybench
// starts, samples, signals and reports the exit status of is the server,
// not a shell waiting for it. exec goes where the shell forms people
// write need it:
//
//	./srv --port 9000          → exec ./srv --port 9000
//	VAR=x ./srv                → VAR=x exec ./srv
//	cd dir && VAR=x ./srv      → cd dir && VAR=x exec ./srv
//	make build; ./srv          → make build; exec ./srv
//
// that is, before the last simple command of a list (after ;, && or &,
// across lines), after its variable assignments. A command line whose
// last command is not simple (a pipeline, ||, a subshell, a compound
// command, a here-document) is run as before, exec before it all, when it
// is one command ("./srv | tee log": the pipeline's first program is
// what lobbybench watches); after a list it is refused, as exec could
// reach no server there.
func Script(command string) (script, program string, err error) {
	elems, ok := shellList(command)
	if !ok {
		return "exec " + command, firstWord(command), nil
	}
	last := elems[len(elems)-1]
	if last.complex {
		if len(elems) > 1 {
			return "", "", fmt.Errorf("--target-cmd %q: the last command is not a simple command (a pipeline, ||, a subshell or a compound command): lobbybench runs the server's command with exec, so that the process it watches, signals and reports is the server, and cannot here; put the start in a script that ends with 'exec SERVER ARGS', or give the server's command alone", command)
		}
		return "exec " + command, firstWord(command), nil
	}
	at := -1
	for _, w := range last.words {
		if !assignment.MatchString(command[w[0]:w[1]]) {
			at = w[0]
			program = command[w[0]:w[1]]
			break
		}
	}
	switch {
	case at < 0 && len(elems) == 1 && len(last.words) == 0:
		return "", "", fmt.Errorf("--target-cmd %q: no command in it", command)
	case at < 0:
		return "", "", fmt.Errorf("--target-cmd %q: the last command sets variables and starts nothing; the server's command goes last", command)
	case program == "exec":
		script, program = command, firstWord(command[at+len("exec"):])
	default:
		script = command[:at] + "exec " + command[at:]
	}
	if len(elems) > 1 {
		program = "" // which of the list's commands was not found, the shell says
	}
	return script, program, nil
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// reserved are the words that open or close a compound command.
var reserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "{": true, "}": true, "!": true, "function": true, "select": true, "[[": true}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// element is one command of a shell list: its words' offsets in the line,
// and whether it is more than a simple command.
type element struct {
	words   [][2]int
	complex bool
}

// shellList splits a command line into the commands of its list at the
// separators outside quotes and substitutions (;, &&, &, newline), with
// each command's words. ok is false when the line cannot be read so
// (an unclosed quote or substitution, a here-document): the shell is
// left to say what it makes of it.
func shellList(line string) ([]element, bool) {
	s := &listScanner{line: line, start: -1}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			s.endWord(i)
			continue
		case c == '#' && s.start < 0:
			i = commentEnd(line, i) // the newline ends the command
			continue
		case c == '\n' || c == ';' || c == '&' && !redirection(line, i):
			var ok bool
			if i, ok = s.separator(i); !ok {
				return nil, false
			}
			continue
		case c == '|' || c == '(' || c == ')':
			s.endWord(i)
			s.cur.complex = true
			continue
		case c == '<' && i+1 < len(line) && line[i+1] == '<':
			return nil, false // a here-document's lines are no commands
		}
		if s.start < 0 {
			s.start = i
		}
		end, ok := skipQuoted(line, i)
		if !ok {
			return nil, false
		}
		i = end
	}
	s.endWord(len(line))
	s.next()
	elems := s.elems
	// Separators at the end (./srv;) leave empty commands: not the last.
	for len(elems) > 1 && len(elems[len(elems)-1].words) == 0 && !elems[len(elems)-1].complex {
		elems = elems[:len(elems)-1]
	}
	return elems, true
}

// listScanner is shellList's state: the commands read, the one being
// read and the start of the word being read.
type listScanner struct {
	line  string
	elems []element
	cur   element
	start int // of the word being read; -1 between words
}

// endWord ends the word being read, if any, at i; a reserved word in
// command position makes the command complex.
func (s *listScanner) endWord(i int) {
	if s.start < 0 {
		return
	}
	s.cur.words = append(s.cur.words, [2]int{s.start, i})
	if len(s.cur.words) == 1 || allAssignments(s.line, s.cur.words[:len(s.cur.words)-1]) {
		if reserved[s.line[s.start:i]] {
			s.cur.complex = true
		}
	}
	s.start = -1
}

// next ends the command being read.
func (s *listScanner) next() {
	s.elems = append(s.elems, s.cur)
	s.cur = element{}
}

// separator ends the command at the separator at i (;, &, && or a
// newline) and returns the offset of the separator's last byte. ok is
// false at ;;, which belongs in a case.
func (s *listScanner) separator(i int) (last int, ok bool) {
	c := s.line[i]
	s.endWord(i)
	if c == ';' && i+1 < len(s.line) && s.line[i+1] == ';' {
		return i, false
	}
	if c == '&' && i+1 < len(s.line) && s.line[i+1] == '&' {
		i++
	}
	s.next()
	return i, true
}

// commentEnd returns the offset of the last byte of the comment that
// starts at i, before the newline that ends it.
func commentEnd(line string, i int) int {
	if j := strings.IndexByte(line[i:], '\n'); j >= 0 {
		return i + j - 1
	}
	return len(line) - 1
}

// redirection reports whether the & at i belongs to a redirection (2>&1,
// <&3, &>file) rather than ending a command.
func redirection(line string, i int) bool {
	return i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>'
}

func allAssignments(line string, words [][2]int) bool {
	for _, w := range words {
		if !assignment.MatchString(line[w[0]:w[1]]) {
			return false
		}
	}
	return true
}

// skipQuoted returns the offset of the last byte of what starts at i: a
// quoted string, an escaped byte, a $(…) or `…` substitution, or i itself.
func skipQuoted(line string, i int) (int, bool) {
	switch {
	case line[i] == '\\':
		return i + 1, i+1 < len(line)
	case line[i] == '\'':
		j := strings.IndexByte(line[i+1:], '\'')
		return i + 1 + j, j >= 0
	case line[i] == '"' || line[i] == '`':
		for j := i + 1; j < len(line); j++ {
			switch line[j] {
			case '\\':
				j++
			case line[i]:
				return j, true
			}
		}
		return 0, false
	case line[i] == '$' && i+1 < len(line) && line[i+1] == '(':
		depth := 0
		for j := i + 1; j < len(line); j++ {
			switch line[j] {
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					return j, true
				}
			case '\'', '"', '`', '\\':
				end, ok := skipQuoted(line, j)
				if !ok {
					return 0, false
				}
				j = end
			}
		}
		return 0, false
	}
	return i, true
}
