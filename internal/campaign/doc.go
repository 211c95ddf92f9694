// Package campaign is outbound calling campaigns: their pure core (when a
// contact may be called, what an upload of contacts holds, how a
// contact's variables fill an agent's text), which does no I/O beyond the
// reader it is given and the time zone database, and the management API
// over it (http.go and the *_http.go files): campaigns and their status,
// contacts with their upload and export, and the project's do-not-call
// list. The dialing engine and the console build on both.
//
// # Calling windows
//
// A campaign's calling_window is {days, start, end}: lower-case day names
// (mon … sun, at least one, none twice) and two times "HH:MM" on a 24-hour
// clock, start before end; end may be "24:00". The default is Monday to
// Friday, 09:00 to 20:00. A contact may be called when the clock on its
// wall shows an open day and a time in [start, end): 19:59:59 is inside a
// window that ends at 20:00, 20:00:00 is not. A window never spans
// midnight. Daylight-saving changes are followed as the wall clock
// follows them: a window starting in the skipped hour of a spring-forward
// night opens at the jump; one starting in the repeated hour of an autumn
// night opens at its first occurrence.
//
// # Time zones of a contact
//
// A contact's timezone, an IANA name such as Europe/Berlin, wins.
// Without one, the number's prefix gives the zones, from libphonenumber's
// mapping (github.com/nyaruka/phonenumbers). When it gives several, the
// window must be open in every one of them at once, so nobody is called
// early in the latest zone or late in the earliest. A prefix of no known
// area maps to every zone of its country: for a US toll-free or 555
// number that spans American Samoa to Guam, and few windows are open in
// all of them at once (09:00–20:00 only from 23:00 to 23:30 UTC), so such
// a contact wants a timezone; an upload refuses one that the campaign's
// window never opens for (DropUnreachable), and a PATCH refuses a window
// that never opens for contacts still to call (strandCheck). A number the
// mapping places in no zone (+800, +882 …) is refused at upload with a
// message asking for a timezone: a guessed zone could call someone at
// night.
// NextOpen says when a contact can next be called, or that it never can
// under the window (nothing within fifteen days).
//
// # Contacts
//
// An upload is a JSON array of {phone_number, timezone?, variables?,
// consent?: {source, at}} or a CSV file. A CSV file's first line is a
// header naming the columns: phone_number (required), then optionally
// timezone, consent_source and consent_at (these four names match
// without regard to case); every other column is a variable named by its
// header. Each cell of a variable column is a value, an empty cell an
// empty value. Blank rows, a UTF-8 byte order mark and CRLF line ends are
// accepted; a file that is not valid CSV, UTF-16 text, or a header with
// an unnamed, repeated or unusable column is refused whole, naming the
// line or column.
//
// Each row is checked, and a bad row is reported with its line (the
// file's line for CSV, the header being line 1; the 1-based position for
// JSON) while the good rows are kept:
//   - phone_number is in international form, + and 7 to 15 digits
//     (spaces, dashes, dots and parentheses are dropped), of a length
//     its country uses; it is stored in E.164 form;
//   - timezone, when given, is a known IANA zone; without it the number
//     must map to a zone;
//   - consent, when given, has a source and optionally an RFC 3339 at;
//   - at most 50 variables, named like identifiers (letters, digits and
//     _, not starting with a digit, at most 64 characters), each value at
//     most 1000 bytes of UTF-8 text.
//
// A number that appears again in the same upload, once normalised, is a
// duplicate: the first row wins and the others are counted. An upload
// with more rows than its limit is refused whole.
//
// # Variables
//
// Fill replaces {{name}} (or {{ name }}) in an agent's instructions and
// greeting with the contact's value for name. A placeholder with no such
// variable is left as written, so the mistake shows in a test call;
// values are inserted literally, never expanded again. Placeholders lists
// the names a text uses, to check against an upload's columns.
//
// # Retries
//
// retry_after is a Go duration from "1s" to "720h" (30 days), "1h" by
// default.
package campaign
