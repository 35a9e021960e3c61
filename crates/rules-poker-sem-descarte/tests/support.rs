/// Deal five cards to each listed seat (by hand: one at a time, bank last, fifth bank card up).
pub fn deal(hands: &[(u8, &str)], bank: &str) -> String {
    let hs: Vec<(u8, Vec<&str>)> = hands
        .iter()
        .map(|(s, h)| (*s, h.split_whitespace().collect()))
        .collect();
    let b: Vec<&str> = bank.split_whitespace().collect();
    let mut out = String::new();
    for r in 0..5 {
        for (s, h) in &hs {
            out.push_str(&format!("card seat:{s} {} down;", h[r]));
        }
        out.push_str(&format!(
            "card dealer {}{};",
            b[r],
            if r == 4 { "" } else { " down" }
        ));
    }
    out
}
