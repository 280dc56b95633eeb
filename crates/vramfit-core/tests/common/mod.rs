//! What more than one integration test reads: CSV lines as Python writes them.

/// Splits one CSV line into fields: commas separate, double quotes enclose
/// a field that holds commas, and `""` inside them is one quote (RFC 4180,
/// as Python's `csv` module writes it; no field holds a line break).
pub fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}
