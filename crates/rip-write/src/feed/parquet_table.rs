//! One concept's Parquet file: a typed schema from its [`Column`]s, rows buffered column
//! by column and written as a row group every [`RowGroupLimit`] rows or bytes, so memory
//! is one row group whatever the number of docs.
//!
//! The schema, for a column of each [`ColumnType`]:
//!
//! - a scalar: `optional` `BYTE_ARRAY` (`STRING`), `INT64`, `DOUBLE` or `BOOLEAN`;
//! - a list: `optional group (LIST) { repeated group list { required <scalar> element } }`,
//!   the three-level shape every reader takes (pyarrow reads it as `list<…>`);
//! - JSON: `optional BYTE_ARRAY (STRING)` holding the value's compact JSON text.
//!
//! A missing field or `null` is a null cell. A value of another type than its column's
//! (a string in an integer column) is a null cell too, counted as mistyped.

use super::columns::{Column, ColumnType, Scalar};
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Arc;

/// When a row group is written: after this many rows or this many bytes of values,
/// whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowGroupLimit {
    /// Rows.
    pub rows: usize,
    /// Bytes of buffered values (an estimate: the values' sizes plus a few bytes each).
    pub bytes: usize,
}

impl Default for RowGroupLimit {
    fn default() -> Self {
        Self {
            rows: 10_000,
            bytes: 32 << 20,
        }
    }
}

/// One column's buffered values and levels.
enum Values {
    Bytes(Vec<ByteArray>),
    Integer(Vec<i64>),
    Number(Vec<f64>),
    Boolean(Vec<bool>),
}

struct Buffer {
    column: Column,
    values: Values,
    def: Vec<i16>,
    rep: Vec<i16>,
}

/// A Parquet file being written.
pub struct ParquetTable<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    buffers: Vec<Buffer>,
    rows: usize,
    bytes: usize,
    limit: RowGroupLimit,
    /// Cells whose value was not of their column's type, by column.
    pub mistyped: Vec<u64>,
}

/// The Parquet schema of `columns`.
fn schema(columns: &[Column]) -> Result<Type, ParquetError> {
    let scalar = |name: &str, s: Scalar, repetition| {
        let (physical, logical) = match s {
            Scalar::String => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Scalar::Integer => (Physical::INT64, None),
            Scalar::Number => (Physical::DOUBLE, None),
            Scalar::Boolean => (Physical::BOOLEAN, None),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .build()
    };
    let mut fields = Vec::with_capacity(columns.len());
    for c in columns {
        let field = match c.ty {
            ColumnType::Scalar(s) => scalar(&c.name, s, Repetition::OPTIONAL)?,
            ColumnType::Json => scalar(&c.name, Scalar::String, Repetition::OPTIONAL)?,
            ColumnType::List(s) => {
                let element = scalar("element", s, Repetition::REQUIRED)?;
                let list = Type::group_type_builder("list")
                    .with_repetition(Repetition::REPEATED)
                    .with_fields(vec![Arc::new(element)])
                    .build()?;
                Type::group_type_builder(&c.name)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(Some(LogicalType::List))
                    .with_fields(vec![Arc::new(list)])
                    .build()?
            }
        };
        fields.push(Arc::new(field));
    }
    Type::group_type_builder("doc").with_fields(fields).build()
}

impl<W: Write + Send> ParquetTable<W> {
    /// Starts a file of `columns` in `out`.
    pub fn new(out: W, columns: &[Column], limit: RowGroupLimit) -> Result<Self, ParquetError> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("rip-write {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = SerializedFileWriter::new(out, Arc::new(schema(columns)?), Arc::new(props))?;
        let buffers = columns
            .iter()
            .map(|c| Buffer {
                values: match c.ty {
                    ColumnType::Scalar(Scalar::Integer) | ColumnType::List(Scalar::Integer) => {
                        Values::Integer(Vec::new())
                    }
                    ColumnType::Scalar(Scalar::Number) | ColumnType::List(Scalar::Number) => {
                        Values::Number(Vec::new())
                    }
                    ColumnType::Scalar(Scalar::Boolean) | ColumnType::List(Scalar::Boolean) => {
                        Values::Boolean(Vec::new())
                    }
                    _ => Values::Bytes(Vec::new()),
                },
                column: c.clone(),
                def: Vec::new(),
                rep: Vec::new(),
            })
            .collect();
        Ok(Self {
            writer,
            buffers,
            rows: 0,
            bytes: 0,
            limit,
            mistyped: vec![0; columns.len()],
        })
    }

    /// Adds a doc as a row; writes a row group when the buffer is full.
    pub fn row(&mut self, doc: &Map<String, Value>) -> Result<(), ParquetError> {
        for (i, b) in self.buffers.iter_mut().enumerate() {
            let value = doc.get(&b.column.name).unwrap_or(&Value::Null);
            let (bytes, typed) = b.push(value);
            self.bytes += bytes;
            if !typed {
                self.mistyped[i] += 1;
            }
        }
        self.rows += 1;
        if self.rows >= self.limit.rows || self.bytes >= self.limit.bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as a row group.
    fn flush(&mut self) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group()?;
        let mut buffers = self.buffers.iter_mut();
        while let Some(mut col) = group.next_column()? {
            let b = buffers
                .next()
                .ok_or_else(|| ParquetError::General("more columns than buffers".into()))?;
            let rep = matches!(b.column.ty, ColumnType::List(_)).then_some(&b.rep[..]);
            let def = Some(&b.def[..]);
            match (col.untyped(), &mut b.values) {
                (ColumnWriter::ByteArrayColumnWriter(w), Values::Bytes(v)) => {
                    w.write_batch(v, def, rep)?;
                    v.clear();
                }
                (ColumnWriter::Int64ColumnWriter(w), Values::Integer(v)) => {
                    w.write_batch(v, def, rep)?;
                    v.clear();
                }
                (ColumnWriter::DoubleColumnWriter(w), Values::Number(v)) => {
                    w.write_batch(v, def, rep)?;
                    v.clear();
                }
                (ColumnWriter::BoolColumnWriter(w), Values::Boolean(v)) => {
                    w.write_batch(v, def, rep)?;
                    v.clear();
                }
                _ => return Err(ParquetError::General("a column of another type".into())),
            }
            b.def.clear();
            b.rep.clear();
            col.close()?;
        }
        group.close()?;
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }

    /// Writes what is buffered and the footer; gives back the output.
    pub fn finish(mut self) -> Result<W, ParquetError> {
        self.flush()?;
        self.writer.into_inner()
    }
}

impl Buffer {
    /// Buffers `value`; gives its size estimate and whether it was of the column's type.
    fn push(&mut self, value: &Value) -> (usize, bool) {
        match self.column.ty {
            ColumnType::List(_) => self.push_list(value),
            _ if value.is_null() => {
                self.def.push(0);
                (2, true)
            }
            ColumnType::Json => {
                let text = serde_json::to_vec(value).unwrap_or_default();
                let n = text.len();
                self.push_scalar_bytes(text);
                (n + 16, true)
            }
            ColumnType::Scalar(_) => match self.push_value(value) {
                Some(n) => {
                    self.def.push(1);
                    (n, true)
                }
                None => {
                    self.def.push(0);
                    (2, false)
                }
            },
        }
    }

    fn push_scalar_bytes(&mut self, text: Vec<u8>) {
        if let Values::Bytes(v) = &mut self.values {
            v.push(ByteArray::from(text));
        }
        self.def.push(1);
    }

    /// A list: null (def 0), empty (def 1), or its items (def 2, rep 0 then 1).
    fn push_list(&mut self, value: &Value) -> (usize, bool) {
        let items = match value {
            Value::Null => {
                self.def.push(0);
                self.rep.push(0);
                return (4, true);
            }
            Value::Array(items) => items,
            _ => {
                self.def.push(0);
                self.rep.push(0);
                return (4, false);
            }
        };
        if items.is_empty() {
            self.def.push(1);
            self.rep.push(0);
            return (4, true);
        }
        let (mut bytes, mut typed) = (0, true);
        let mut first = true;
        for item in items {
            let Some(n) = self.push_value(item) else {
                typed = false;
                continue;
            };
            self.def.push(2);
            self.rep.push(if first { 0 } else { 1 });
            first = false;
            bytes += n + 4;
        }
        if first {
            // No item of the column's type: an empty list, counted as mistyped.
            self.def.push(1);
            self.rep.push(0);
        }
        (bytes, typed)
    }

    /// Pushes one value of the column's scalar type; `None` when it is of another type.
    fn push_value(&mut self, value: &Value) -> Option<usize> {
        match (&mut self.values, value) {
            (Values::Bytes(v), Value::String(s)) => {
                v.push(ByteArray::from(s.as_bytes().to_vec()));
                Some(s.len() + 16)
            }
            (Values::Integer(v), Value::Number(n)) => {
                v.push(n.as_i64()?);
                Some(8)
            }
            (Values::Number(v), Value::Number(n)) => {
                v.push(n.as_f64()?);
                Some(8)
            }
            (Values::Boolean(v), Value::Bool(b)) => {
                v.push(*b);
                Some(1)
            }
            _ => None,
        }
    }
}
