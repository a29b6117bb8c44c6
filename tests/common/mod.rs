pub mod lsp;
pub mod tree;
