//! Kubernetes quantities (`"250m"`, `"8Gi"`) as exact milli-units in an `i128`: the agent sums
//! nodes' capacity with them and placement compares clusters' resources.

/// A quantity in thousandths of its unit (`"250m"` → 250, `"1Ki"` → 1 024 000).
#[must_use]
pub fn parse_milli(text: &str) -> Option<i128> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let negative = int.starts_with('-');
    let int = int.trim_start_matches(['+', '-']);
    if (int.is_empty() && frac.is_empty()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // value = digits / 10^scale
    let digits: i128 = format!("{int}{frac}").parse().ok()?;
    let scale = u32::try_from(frac.len()).ok()?;
    let (num, den): (i128, i128) = match suffix {
        "n" => (1, 1_000_000_000),
        "u" => (1, 1_000_000),
        "m" => (1, 1000),
        "" => (1, 1),
        "k" => (1000, 1),
        "M" => (1_000_000, 1),
        "G" => (1_000_000_000, 1),
        "T" => (1_000_000_000_000, 1),
        "P" => (1_000_000_000_000_000, 1),
        "E" => (1_000_000_000_000_000_000, 1),
        "Ki" => (1 << 10, 1),
        "Mi" => (1 << 20, 1),
        "Gi" => (1 << 30, 1),
        "Ti" => (1 << 40, 1),
        "Pi" => (1 << 50, 1),
        "Ei" => (1 << 60, 1),
        _ => return None,
    };
    // Round up like apimachinery does when a value is finer than milli.
    let numerator = digits.checked_mul(num)?.checked_mul(1000)?;
    let denominator = den.checked_mul(10_i128.checked_pow(scale)?)?;
    let value = (numerator + denominator - 1).div_euclid(denominator);
    Some(if negative { -value } else { value })
}

/// Prints milli-units: whole units plainly, otherwise with the `m` suffix.
#[must_use]
pub fn format_milli(milli: i128) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(parse_milli("4"), Some(4000));
        assert_eq!(parse_milli("250m"), Some(250));
        assert_eq!(parse_milli("1.5"), Some(1500));
        assert_eq!(parse_milli("1Ki"), Some(1_024_000));
        assert_eq!(parse_milli("8Gi"), Some(8 * (1 << 30) * 1000));
        assert_eq!(parse_milli("2k"), Some(2_000_000));
        assert_eq!(parse_milli("1n"), Some(1), "rounds up");
        assert_eq!(parse_milli("banana"), None);
        assert_eq!(parse_milli("5X"), None);
    }
}
